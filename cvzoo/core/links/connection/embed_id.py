"""EmbedID: a learnable table of vectors, one row per integer id."""

import cvzoo.core.functions as F
from cvzoo import errors
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter


class EmbedID(link.Link):
    """Map integer ids to learned vectors: ``y[..., :] = W[x[...]]`` (Chainer's EmbedID,
    PyTorch's ``nn.Embedding``).

    Args:
        in_size (int): the number of ids (rows of W); ids are ``0 .. in_size - 1``.
        out_size (int): the length of each vector.
        initialW: initializer, array or scalar for W (default Normal(1.0), as Chainer's).
        ignore_label (int or None): positions holding this id give zeros and no gradient
            (a padding id).

    Attributes:
        W (Parameter): (in_size, out_size) float32.

    >>> import numpy as np
    >>> embed = EmbedID(10, 4, ignore_label=-1)
    >>> y = embed(np.array([[3, 9, -1]], np.int32))
    >>> y.shape
    (1, 3, 4)
    >>> bool((y.array[0, 2] == 0).all())
    True
    """

    def __init__(self, in_size, out_size, initialW=None, ignore_label=None):
        super().__init__()
        for name, value in (('in_size', in_size), ('out_size', out_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise errors.UsageError(f'EmbedID: {name} must be a positive int, got {value!r}')
        self.ignore_label = ignore_label
        with self.init_scope():
            self.W = Parameter(initializers.Normal(1.0) if initialW is None else initialW,
                               (in_size, out_size))

    def forward(self, x):
        """The rows of W for the int ids ``x`` (any shape): ``x.shape + (out_size,)``."""
        return F.embed_id(x, self.W, ignore_label=self.ignore_label)

    def _repr_args(self):
        return (f'in_size={self.W.shape[0]}, out_size={self.W.shape[1]}, '
                f'ignore_label={self.ignore_label}')
