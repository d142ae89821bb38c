"""mean over axes."""

from cvzoo.core import backend, mixed_precision
from cvzoo.core.functions.math import sum as sum_module


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean of ``x`` over ``axis``; supports double backprop.

    Args:
        x (Variable or array): float.
        axis (None, int or tuple of int): axes to average over; None averages everything.
        keepdims (bool): keep reduced axes as size 1.

    Returns:
        Variable: the means, of x's dtype (NaN when an averaged axis is empty).
    """
    x, = mixed_precision.cast_to_float32(x)
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'mean: x must be a float array, got dtype {x.dtype}')
    axes = sum_module.normalize_axis(axis, x.ndim, 'mean')
    count = 1
    for a in axes:
        count *= x.shape[a]
    total = sum_module.sum(x, axes, keepdims)
    # NOTE: multiplying by 1/0 gives inf*0 = NaN where numpy's mean gives NaN too.
    return total * (1.0 / count if count else float('nan'))
