"""embed_id: look up rows of an embedding matrix by integer id."""

import numpy

from cvzoo import errors
from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


def _kept(x, in_size, ignore_label):
    """Where an id picks a row: in range and not ``ignore_label``."""
    kept = (x >= 0) & (x < in_size)
    return kept if ignore_label is None else kept & (x != ignore_label)


class EmbedID(function_node.FunctionNode):
    def __init__(self, ignore_label):
        self.ignore_label = ignore_label

    def forward(self, inputs):
        x, W = inputs
        xp = backend.get_array_module(W)
        self.retain_inputs((0,))
        self.in_size = W.shape[0]
        kept = _kept(x, W.shape[0], self.ignore_label)
        y = xp.where(kept[..., None], W[xp.where(kept, x, 0)], W.dtype.type(0))
        # NOTE: ids on a GPU are not range-checked on the host (reading them would sync
        # every step): an id out of range gives a row of NaN, not CuPy's wrap-around
        out_of_range = (x < 0) | (x >= W.shape[0])
        if self.ignore_label is not None:
            out_of_range &= x != self.ignore_label
        return xp.where(out_of_range[..., None], W.dtype.type(numpy.nan), y),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        grad = _EmbedIDGrad(x.array, self.in_size, self.ignore_label)
        return None, grad.apply(grad_outputs)[0]


class _EmbedIDGrad(function_node.FunctionNode):
    """gW: each output row's gradient added, by one scatter-add, into its id's row."""

    def __init__(self, x, in_size, ignore_label):
        self.x = x  # the ids: an input of embed_id (retained there), not of this node
        self.in_size = in_size
        self.ignore_label = ignore_label

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        ids = self.x.ravel()
        rows = gy.reshape(-1, gy.shape[-1])
        kept = _kept(ids, self.in_size, self.ignore_label)
        gW = xp.zeros((self.in_size, gy.shape[-1]), gy.dtype)
        # ignored ids add a zero row to row 0, so one scatter-add serves every case
        backend.add_at(gW, xp.where(kept, ids, 0), xp.where(kept[:, None], rows, 0))
        return gW,

    def backward(self, indexes, grad_outputs):
        ggW, = grad_outputs
        return embed_id(self.x, ggW, self.ignore_label),


def embed_id(x, W, ignore_label=None):
    """Return the rows of ``W`` that the ids in ``x`` select: ``y[..., :] = W[x[...]]``.

    The gradient with respect to ``W`` adds each output row's gradient into row
    ``x[...]`` (one scatter-add, so repeated ids accumulate). ``x`` gets no gradient.
    Supports double backprop.

    Args:
        x (Variable or array): int ids of any shape, each in ``[0, W.shape[0])`` or equal
            to ``ignore_label``.
        W (Variable or array): (in_size, out_size) float embedding matrix.
        ignore_label (int or None): positions holding this id give a row of zeros and
            add nothing to the gradient of ``W``.

    Returns:
        Variable: ``x.shape + (out_size,)``, W's dtype.

    Raises:
        TypeError: x is not an integer array.
        UsageError: W is not 2-D, or (on the CPU) an id is out of range. On a GPU an id
            out of range gives a row of NaN instead of a host check every step.

    >>> import numpy as np
    >>> W = np.array([[0., 1.], [2., 3.], [4., 5.]], np.float32)
    >>> embed_id(np.array([2, 0, -1]), W, ignore_label=-1).array
    array([[4., 5.],
           [0., 1.],
           [0., 0.]], dtype=float32)
    """
    _check_arguments(variable_module.as_array(x), W, ignore_label)
    return EmbedID(ignore_label).apply((x, W))[0]


def _check_arguments(x, W, ignore_label):
    if x.dtype.kind not in 'iu':
        raise TypeError(f'embed_id: x must be an integer array, got {x.dtype}')
    if W.ndim != 2:
        raise errors.UsageError(
            f'embed_id: W must be 2-D (in_size, out_size), got shape {W.shape}')
    if backend.get_array_module(x) is not backend.numpy or x.size == 0:
        return  # range-checked in forward without a sync (NaN rows)
    ids = x if ignore_label is None else x[x != ignore_label]
    if ids.size and (ids.min() < 0 or ids.max() >= W.shape[0]):
        bad = ids[(ids < 0) | (ids >= W.shape[0])][0]
        raise errors.UsageError(f'embed_id: x holds the id {int(bad)}, outside [0, {W.shape[0]}) '
                         f'(W has {W.shape[0]} rows)'
                         + ('' if ignore_label is None else f' and is not ignore_label '
                            f'{ignore_label}'))
