"""log_softmax along one axis."""

from cvzoo.core import backend, function_node, mixed_precision
from cvzoo.core.functions.activation import softmax as softmax_module
from cvzoo.core.functions.math import exponential
from cvzoo.core.functions.math import sum as sum_module


def log_softmax_array(x, axis):
    """``x - logsumexp(x)`` of an array; the max is subtracted before exp."""
    xp = backend.get_array_module(x)
    y = x - x.max(axis=axis, keepdims=True)
    y -= xp.log(xp.exp(y).sum(axis=axis, keepdims=True))
    return y


class LogSoftmax(function_node.FunctionNode):
    def __init__(self, axis):
        self.axis = axis

    def forward(self, inputs):
        self.retain_outputs((0,))
        return log_softmax_array(inputs[0], self.axis),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        return gy - exponential.exp(y) * sum_module.sum(gy, axis=self.axis, keepdims=True),


def log_softmax(x, axis=1):
    """Logarithm of the softmax along ``axis``, computed with a stable log-sum-exp.

    ``log_softmax(x) = x - max(x) - log(sum(exp(x - max(x))))``; finite for logits of any
    size. Supports double backprop.

    Args:
        x (Variable or array): float input, e.g. (N, C) or (N, C, H, W) scores.
        axis (int): the axis to normalise.

    Returns:
        Variable: same shape and dtype as ``x``.
    """
    x, = mixed_precision.cast_to_float32(x)
    axis = softmax_module.check_axis('log_softmax', axis, x.ndim)
    return LogSoftmax(axis).apply((x,))[0]
