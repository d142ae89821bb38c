"""softmax along one axis."""

from cvzoo.core import backend, function_node, mixed_precision
from cvzoo.core.functions.math import sum as sum_module


def check_axis(what, axis, ndim):
    """Return ``axis`` as a non-negative int, or raise a ValueError naming ``what``."""
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f'{what}: axis must be an int, got {type(axis).__name__}')
    if not -ndim <= axis < ndim:
        raise ValueError(f'{what}: axis {axis} is out of range for an input of {ndim} axes')
    return axis % ndim


def softmax_array(x, axis):
    """Softmax of an array, stable for large values (the max is subtracted first)."""
    xp = backend.get_array_module(x)
    y = x - x.max(axis=axis, keepdims=True)
    xp.exp(y, out=y)
    y /= y.sum(axis=axis, keepdims=True)
    return y


class Softmax(function_node.FunctionNode):
    def __init__(self, axis):
        self.axis = axis

    def forward(self, inputs):
        self.retain_outputs((0,))
        return softmax_array(inputs[0], self.axis),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        y_gy = y * grad_outputs[0]
        return y_gy - y * sum_module.sum(y_gy, axis=self.axis, keepdims=True),


def softmax(x, axis=1):
    """Softmax along ``axis``: ``exp(x) / sum(exp(x))``, stable for large logits.

    Supports double backprop.

    Args:
        x (Variable or array): float input, e.g. (N, C) or (N, C, H, W) scores.
        axis (int): the axis to normalise.

    Returns:
        Variable: same shape and dtype as ``x``; sums to 1 along ``axis``.

    >>> import numpy as np
    >>> softmax(np.array([[0.0, 0.0]])).array
    array([[0.5, 0.5]])
    """
    x, = mixed_precision.cast_to_float32(x)
    axis = check_axis('softmax', axis, x.ndim)
    return Softmax(axis).apply((x,))[0]
