"""Linear: the fully connected layer y = x W^T + b."""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter


class Linear(link.Link):
    """Fully connected layer; the input size may be left for the first call to fix.

    ``Linear(out_size)`` (one argument) is ``Linear(None, out_size)``.

    Args:
        in_size (int or None): input features; None infers it from the first input.
        out_size (int): output features.
        nobias (bool): no bias.
        initialW: initializer, array or scalar for W (default LeCunNormal).
        initial_bias: initializer, array or scalar for b (default 0).

    Attributes:
        W (Parameter): (out_size, in_size) float32.
        b (Parameter or None): (out_size,) float32.

    >>> import numpy as np
    >>> fc = Linear(10)
    >>> fc(np.zeros((2, 3, 4), dtype=np.float32)).shape
    (2, 10)
    >>> fc.W.shape
    (10, 12)
    """

    def __init__(self, in_size, out_size=None, nobias=False, initialW=None, initial_bias=None):
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        self.out_size = out_size
        with self.init_scope():
            self.W = Parameter(initializers.LeCunNormal() if initialW is None else initialW)
            if in_size is not None:
                self.W.initialize((out_size, in_size))
            self.b = None
            if not nobias:
                self.b = Parameter(0.0 if initial_bias is None else initial_bias, (out_size,))

    @property
    def in_size(self):
        """Input features, or None before the first call of a lazy layer."""
        return None if self.W.array is None else self.W.shape[1]

    def forward(self, x, n_batch_axes=1):
        """Apply the layer to ``x`` (B, ..., in_size features after the batch axes)."""
        if self.W.array is None:
            in_size = int(numpy.prod(x.shape[n_batch_axes:]))
            self.W.initialize((self.out_size, in_size))
        return F.linear(x, self.W, self.b, n_batch_axes=n_batch_axes)

    def _repr_args(self):
        return f'in_size={self.in_size}, out_size={self.out_size}, nobias={self.b is None}'
