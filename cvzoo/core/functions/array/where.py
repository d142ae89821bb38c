"""where: pick from x where a condition holds, from y elsewhere."""

import numbers

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast


class Where(function_node.FunctionNode):
    def forward(self, inputs):
        condition, x, y = inputs
        xp = backend.get_array_module(*inputs)
        self.retain_inputs((0,))
        self.shapes = (x.shape, y.shape)
        return xp.where(condition, x, y),

    def backward(self, indexes, grad_outputs):
        condition, = self.get_retained_inputs()
        gy, = grad_outputs
        xp = backend.get_array_module(gy)
        zero = variable_module.Variable(xp.zeros((), gy.dtype), requires_grad=False)
        result = []
        for i in indexes:
            if i == 0:
                result.append(None)  # the condition has no gradient
                continue
            picked = (gy, zero) if i == 1 else (zero, gy)
            gx = Where().apply((condition,) + picked)[0]
            shape = self.shapes[i - 1]
            result.append(gx if gx.shape == shape else broadcast.sum_to(gx, shape))
        return tuple(result)


def _as_operand(value, other, name):
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        if not isinstance(other, numbers.Number):
            xp = backend.get_array_module(other)
            return xp.asarray(value, dtype=other.dtype)
        raise TypeError('where: x and y cannot both be numbers; one must give the dtype')
    if not hasattr(value, 'dtype'):
        raise TypeError(f'where: {name} must be a Variable, an array or a number, got {value!r}')
    return value


def where(condition, x, y):
    """Elementwise ``x if condition else y`` with broadcasting; supports double backprop.

    Args:
        condition (Variable or array): bool; it gets no gradient.
        x (Variable, array or number): float; a number takes y's dtype.
        y (Variable, array or number): of x's dtype; a number takes x's dtype.

    Returns:
        Variable: of the broadcast shape of the three.

    Raises:
        TypeError: condition is not bool, or x and y differ in dtype.
        ValueError: the shapes do not broadcast.

    >>> import numpy as np
    >>> where(np.array([True, False]), np.array([1.0, 2.0]), 0.0).array
    array([1., 0.])
    """
    x, y = _as_operand(x, y, 'x'), _as_operand(y, x, 'y')
    if getattr(condition, 'dtype', None) != numpy.bool_:
        raise TypeError(
            'where: condition must be a bool array or Variable, got '
            f'{getattr(condition, "dtype", type(condition).__name__)}')
    if x.dtype != y.dtype:
        raise TypeError(f'where: x and y must share a dtype, got {x.dtype} and {y.dtype}')
    try:
        numpy.broadcast_shapes(condition.shape, x.shape, y.shape)
    except ValueError:
        raise ValueError(
            f'where: the shapes of condition {condition.shape}, x {x.shape} and y {y.shape} '
            'do not broadcast') from None
    return Where().apply((condition, x, y))[0]
