"""batch_l2_norm_squared: squared L2 norm of each sample."""

from cvzoo.core import backend
from cvzoo.core.functions.array import reshape
from cvzoo.core.functions.math import square
from cvzoo.core.functions.math import sum as sum_module


def batch_l2_norm_squared(x):
    """Sum of squares of each sample's elements; supports double backprop.

    Args:
        x (Variable or array): (B, ...) float.

    Returns:
        Variable: (B,) of x's dtype.
    """
    if x.ndim < 1:
        raise ValueError(f'batch_l2_norm_squared: x must have a batch axis, got shape {x.shape}')
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'batch_l2_norm_squared: x must be a float array, got dtype {x.dtype}')
    flat = reshape.reshape(x, (x.shape[0], -1)) if x.shape[0] else reshape.reshape(x, (0, 1))
    return sum_module.sum(square.square(flat), axis=1)
