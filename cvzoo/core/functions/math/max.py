"""max over axes; the gradient goes to one arg-max element."""

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast, reshape
from cvzoo.core.functions.math import sum as sum_module


class Max(function_node.FunctionNode):
    """Reduce with ``arg_name`` ('argmax' here); Min reuses it with 'argmin'."""

    arg_name = 'argmax'

    def __init__(self, axes, keepdims):
        self.axes = axes
        self.keepdims = keepdims

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.in_shape = x.shape
        kept = [i for i in range(x.ndim) if i not in self.axes]
        self.permutation = tuple(kept) + self.axes
        kept_shape = tuple(x.shape[i] for i in kept)
        n_reduced = int(numpy.prod([x.shape[i] for i in self.axes], dtype=numpy.int64))
        rows = x.transpose(self.permutation).reshape(kept_shape + (n_reduced,))
        # NOTE: argmax picks the first of tied elements, so exactly one gets the gradient.
        self.index = getattr(rows, self.arg_name)(axis=-1)
        y = xp.take_along_axis(rows, self.index[..., None], axis=-1)[..., 0]
        if self.keepdims:
            y = y.reshape(sum_module.keepdims_shape(x.shape, self.axes))
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        xp = backend.get_array_module(self.index)
        n_reduced = int(numpy.prod([self.in_shape[i] for i in self.axes], dtype=numpy.int64))
        chosen = xp.arange(n_reduced) == self.index[..., None]
        chosen = chosen.reshape(tuple(self.in_shape[i] for i in self.permutation))
        chosen = chosen.transpose(numpy.argsort(self.permutation))
        # NOTE: the mask is a constant of the graph, so the second derivative is 0.
        mask = variable_module.Variable(chosen.astype(gy.dtype), requires_grad=False)
        gy = reshape.reshape(gy, sum_module.keepdims_shape(self.in_shape, self.axes))
        return broadcast.broadcast_to(gy, self.in_shape) * mask,


def check_reduction(what, x, axis):
    """Return the normalized axes of a max/min reduction, refusing empty ones."""
    axes = sum_module.normalize_axis(axis, x.ndim, what)
    for a in axes:
        if x.shape[a] == 0:
            raise ValueError(
                f'{what}: cannot reduce axis {a} of size 0 (x has shape {x.shape})')
    return axes


def max(x, axis=None, keepdims=False):  # noqa: A001 - Chainer's name
    """Maximum of ``x`` over ``axis``; supports double backprop.

    The gradient goes to one maximal element per reduced group (the first, in C order
    of the reduced axes, when several tie).

    Args:
        x (Variable or array): float.
        axis (None, int or tuple of int): axes to reduce; None reduces everything.
        keepdims (bool): keep reduced axes as size 1.

    Returns:
        Variable: the maxima, of x's dtype.

    Raises:
        ValueError: an axis to reduce is out of range, repeated or of size 0.
    """
    axes = check_reduction('max', x, axis)
    return Max(axes, keepdims).apply((x,))[0]
