"""normalize: divide by the L2 norm along an axis."""

from cvzoo.core import variable as variable_module
from cvzoo.core.functions.math import maximum as minmax
from cvzoo.core.functions.math import sum as sum_module

_SQUARE_FLOOR = 1e-30


def normalize(x, eps=1e-5, axis=1):
    """L2 normalisation, ``x / (sqrt(sum(x^2, axis)) + eps)`` (used by SSD's conv4_3).

    Composed of differentiable functions, so it supports double backprop. Where a whole
    vector along ``axis`` is 0 the norm is not differentiable; there the gradient is
    taken as ``gy / eps`` (the norm's subgradient 0), not NaN.

    Args:
        x (Variable or array): float input, e.g. (N, C, H, W).
        eps (float): added to the norm, keeps the division finite.
        axis (int): the axis whose vectors are normalised.

    Returns:
        Variable: x's shape and dtype.

    Raises:
        ValueError: ``axis`` is out of range.
    """
    x = variable_module.as_variable(x)
    if not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f'normalize: axis must be an int in [-{x.ndim}, {x.ndim}), got {axis!r}')
    squares = sum_module.sum(x * x, axis=axis, keepdims=True)
    # NOTE: the floor keeps sqrt's derivative finite at 0; maximum sends no gradient to
    # the sum there, and the floor's square root (1e-15) is far below eps.
    floor = x.xp.asarray(_SQUARE_FLOOR, dtype=x.dtype)
    norm = minmax.maximum(squares, floor) ** 0.5 + eps
    return x / norm
