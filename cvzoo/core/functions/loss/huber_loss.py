"""huber_loss: squared error near 0, absolute error beyond delta."""

import numbers

from cvzoo.core import backend, function_node, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.math import sum as sum_module

_REDUCE = ('sum_along_second_axis', 'no')


class HuberLoss(function_node.FunctionNode):
    def __init__(self, delta):
        self.delta = delta

    def forward(self, inputs):
        x, t = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0, 1))
        diff = x - t
        abs_diff = xp.abs(diff)
        delta = x.dtype.type(self.delta)
        squared = diff * diff * x.dtype.type(0.5)
        linear = (abs_diff - delta * x.dtype.type(0.5)) * delta
        return xp.where(abs_diff <= delta, squared, linear),

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        xp = x.xp
        diff_array = x.array - t.array
        inside = xp.asarray(xp.abs(diff_array) <= self.delta, dtype=x.dtype)
        # NOTE: d/d(diff) is clip(diff, -delta, delta); written as inside * diff plus a
        # constant outside, so that its own derivative (inside) is right.
        outside = xp.asarray((1 - inside) * xp.sign(diff_array) * self.delta, dtype=x.dtype)
        inside_var = variable_module.Variable(inside, requires_grad=False)
        outside_var = variable_module.Variable(outside, requires_grad=False)
        gdiff = grad_outputs[0] * ((x - t) * inside_var + outside_var)
        return gdiff, -gdiff


def huber_loss(x, t, delta, reduce='sum_along_second_axis'):
    """Huber loss, elementwise, then summed along axis 1 (Chainer's).

    ``l(d) = d^2 / 2`` where ``|d| <= delta``, else ``delta * (|d| - delta / 2)``, with
    ``d = x - t``. Supports double backprop.

    Args:
        x, t (Variable or array): float arrays of one shape (N, C, ...) and dtype.
        delta (float): the positive switch point.
        reduce (str): ``'sum_along_second_axis'`` sums over axis 1 (the result drops that
            axis); ``'no'`` returns the loss of each element.

    Returns:
        Variable: x's shape without axis 1, or x's shape with ``reduce='no'``.

    Raises:
        ValueError: shapes differ, delta is not positive, or ``reduce`` is unknown.
    """
    x, t = mixed_precision.cast_to_float32(x, t)
    if reduce not in _REDUCE:
        raise ValueError(f'huber_loss: reduce must be one of {_REDUCE}, got {reduce!r}')
    if not isinstance(delta, numbers.Real) or delta <= 0:
        raise ValueError(f'huber_loss: delta must be a positive number, got {delta!r}')
    if tuple(x.shape) != tuple(t.shape):
        raise ValueError(f'huber_loss: x and t must have the same shape, got {x.shape} '
                         f'and {t.shape}')
    loss = HuberLoss(float(delta)).apply((x, t))[0]
    if reduce == 'sum_along_second_axis':
        if loss.ndim < 2:
            raise ValueError(f'huber_loss: reduce={reduce!r} needs x of at least 2 axes, '
                             f'got {x.shape}')
        return sum_module.sum(loss, axis=1)
    return loss
