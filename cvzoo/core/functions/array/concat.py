"""concat: join arrays along an existing axis."""

import numbers

import numpy

from cvzoo.core import backend, function_node, mixed_precision
from cvzoo.core.functions.array import split_axis


class Concat(function_node.FunctionNode):
    def __init__(self, axis):
        self.axis = axis

    def forward(self, inputs):
        xp = backend.get_array_module(*inputs)
        self.sizes = [x.shape[self.axis] for x in inputs]
        return xp.concatenate(inputs, axis=self.axis),

    def backward(self, indexes, grad_outputs):
        points = numpy.cumsum(self.sizes[:-1]).tolist()
        gxs = split_axis.split_axis(grad_outputs[0], points, self.axis)
        return tuple(gxs[i] for i in indexes)


def check_same_shapes(what, xs, axis):
    """Raise unless every x has the first one's ndim, dtype, and shape except at ``axis``."""
    first = xs[0]
    for i, x in enumerate(xs[1:], 1):
        if x.dtype != first.dtype:
            raise TypeError(
                f'{what}: xs must share a dtype, xs[0] is {first.dtype} and xs[{i}] is {x.dtype}')
        same = x.ndim == first.ndim and all(
            m == n for k, (m, n) in enumerate(zip(x.shape, first.shape)) if k != axis)
        if not same:
            raise ValueError(
                f'{what}: xs must match in every axis but axis {axis}, xs[0] has shape '
                f'{first.shape} and xs[{i}] has shape {x.shape}')


def concat(xs, axis=1):
    """Join the arrays ``xs`` along an existing ``axis``; supports double backprop.

    Args:
        xs (sequence of Variable or array): at least one; same dtype (under
            ``cvzoo.core.autocast`` float dtypes are cast to the widest), same shape except
            along ``axis``.
        axis (int): the axis to join along (negative counts from the end).

    Returns:
        Variable: the concatenation.

    Raises:
        ValueError: xs is empty, the axis is out of range, or the shapes do not fit.

    >>> import numpy as np
    >>> concat([np.zeros((2, 1)), np.ones((2, 3))]).shape
    (2, 4)
    """
    xs = list(mixed_precision.promote(*xs))
    if not xs:
        raise ValueError('concat: xs must hold at least one array, got none')
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, numpy.integer)):
        raise TypeError(f'concat: axis must be an int, got {axis!r}')
    ndim = xs[0].ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f'concat: axis {axis} is out of range for xs[0] of shape {xs[0].shape}')
    axis = int(axis) % ndim
    check_same_shapes('concat', xs, axis)
    return Concat(axis).apply(xs)[0]
