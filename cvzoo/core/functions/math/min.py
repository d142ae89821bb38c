"""min over axes; the gradient goes to one arg-min element."""

from cvzoo.core.functions.math import max as max_module


class Min(max_module.Max):
    arg_name = 'argmin'


def min(x, axis=None, keepdims=False):  # noqa: A001 - Chainer's name
    """Minimum of ``x`` over ``axis``; supports double backprop.

    The gradient goes to one minimal element per reduced group (the first, in C order
    of the reduced axes, when several tie).

    Args:
        x (Variable or array): float.
        axis (None, int or tuple of int): axes to reduce; None reduces everything.
        keepdims (bool): keep reduced axes as size 1.

    Returns:
        Variable: the minima, of x's dtype.

    Raises:
        ValueError: an axis to reduce is out of range, repeated or of size 0.
    """
    axes = max_module.check_reduction('min', x, axis)
    return Min(axes, keepdims).apply((x,))[0]
