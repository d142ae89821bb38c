"""absolute_error: |x0 - x1| elementwise."""

from cvzoo.core import mixed_precision
from cvzoo.core.functions.math import basic_math


def absolute_error(x0, x1):
    """Elementwise absolute error ``|x0 - x1|`` (Chainer's; not reduced).

    The gradient at ``x0 == x1`` is taken as 0. Supports double backprop.

    Args:
        x0, x1 (Variable or array): float arrays of one shape and dtype.

    Returns:
        Variable: x0's shape and dtype.

    Raises:
        ValueError: the shapes differ.
    """
    x0, x1 = mixed_precision.cast_to_float32(x0, x1)
    if tuple(x0.shape) != tuple(x1.shape):
        raise ValueError(f'absolute_error: x0 and x1 must have the same shape, got '
                         f'{x0.shape} and {x1.shape}')
    return basic_math.absolute(basic_math.sub(x0, x1))
