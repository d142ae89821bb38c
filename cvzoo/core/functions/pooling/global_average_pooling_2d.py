"""global_average_pooling_2d: the mean over height and width."""

from cvzoo.core.functions.math import sum as sum_module


def global_average_pooling_2d(x, keepdims=False):
    """Average each channel over all its positions.

    The same as ``average_pooling_2d(x, (H, W))`` (with keepdims=True), written as a
    sum and a scale; supports double backprop. Not a Chainer function; its name follows
    the ``*_pooling_2d`` family.

    Args:
        x (Variable or array): (N, C, H, W) float, H * W > 0.
        keepdims (bool): return (N, C, 1, 1) instead of (N, C).

    Returns:
        Variable: (N, C) or (N, C, 1, 1), the dtype of x.

    >>> import numpy as np
    >>> x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    >>> global_average_pooling_2d(x).array
    array([[1.5, 5.5]], dtype=float32)
    """
    if x.ndim != 4 or x.shape[2] * x.shape[3] == 0:
        raise ValueError(
            f'global_average_pooling_2d: x must be (N, C, H, W) with H * W > 0, got shape '
            f'{x.shape}')
    return sum_module.sum(x, axis=(2, 3), keepdims=keepdims) * (1.0 / (x.shape[2] * x.shape[3]))
