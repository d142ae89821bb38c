"""mean_squared_error: mean of (x0 - x1) ** 2."""

from cvzoo.core import mixed_precision
from cvzoo.core.functions.math import sum as sum_module


def mean_squared_error(x0, x1):
    """Mean of the squared differences, ``sum((x0 - x1) ** 2) / x0.size``.

    Composed of differentiable functions, so it supports double backprop.

    Args:
        x0, x1 (Variable or array): float arrays of one shape and dtype.

    Returns:
        Variable: 0-d, x0's dtype.

    Raises:
        ValueError: the shapes differ or the arrays are empty.
    """
    x0, x1 = mixed_precision.cast_to_float32(x0, x1)
    if tuple(x0.shape) != tuple(x1.shape):
        raise ValueError(f'mean_squared_error: x0 and x1 must have the same shape, got '
                         f'{x0.shape} and {x1.shape}')
    if x0.size == 0:
        raise ValueError('mean_squared_error: the inputs are empty')
    diff = x0 - x1
    return sum_module.sum(diff * diff) * (1.0 / diff.size)
