"""sum over axes."""

import numbers

import numpy

from cvzoo.core import backend, function_node, mixed_precision
from cvzoo.core.functions.array import broadcast, reshape


def normalize_axis(axis, ndim, what='axis'):
    """Return ``axis`` as a sorted tuple of non-negative ints (None: all axes)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    result = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f'{what}: axis {a} is out of range for an array of {ndim} axes')
        result.append(a % ndim if ndim else 0)
    if len(set(result)) != len(result):
        raise ValueError(f'{what}: repeated axis in {axis}')
    return tuple(sorted(result))


def keepdims_shape(shape, axes):
    """The shape after reducing ``axes`` with keepdims=True."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


class Sum(function_node.FunctionNode):
    def __init__(self, axes, keepdims):
        self.axes = axes
        self.keepdims = keepdims

    def forward(self, inputs):
        x, = inputs
        self.in_shape = x.shape
        if x.dtype.itemsize == 2 and backend.is_float_dtype(x.dtype):
            # NOTE: float16/bfloat16 sums accumulate in float32, as GPU reductions do;
            # bfloat16's 8 bits would lose a bias gradient's small terms.
            total = x.sum(axis=self.axes, keepdims=self.keepdims, dtype=numpy.float32)
            return total.astype(x.dtype),
        return x.sum(axis=self.axes, keepdims=self.keepdims),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if not self.keepdims:
            gy = reshape.reshape(gy, keepdims_shape(self.in_shape, self.axes))
        return broadcast.broadcast_to(gy, self.in_shape),


def sum(x, axis=None, keepdims=False):  # noqa: A001 - Chainer's name
    """Sum the elements of ``x`` over ``axis``.

    Args:
        x (Variable or array): input.
        axis (None, int or tuple of int): axes to sum over; None sums everything.
        keepdims (bool): keep reduced axes as size 1.

    Returns:
        Variable: the sums.
    """
    x, = mixed_precision.cast_to_float32(x)
    axes = normalize_axis(axis, x.ndim, 'sum')
    return Sum(axes, keepdims).apply((x,))[0]
