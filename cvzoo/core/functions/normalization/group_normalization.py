"""group_normalization: normalise groups of channels per sample."""

import numbers

from cvzoo.core import mixed_precision
from cvzoo.core.functions.array import reshape
from cvzoo.core.functions.math import sum as sum_module
from cvzoo.core.functions.normalization import batch_normalization as bn_module


def group_normalization(x, groups, gamma, beta, eps=1e-5):
    """Group normalisation (Wu and He, Group Normalization, ECCV 2018, eq. 1-3).

    The channels of each sample are split into ``groups`` groups; each group is
    normalised with its own mean and (biased) variance, then channel ``c`` is scaled by
    ``gamma[c]`` and shifted by ``beta[c]``. Composed of differentiable functions, so it
    supports double backprop.

    Args:
        x (Variable or array): (N, C, ...) float, C divisible by ``groups``.
        groups (int): number of groups.
        gamma, beta (Variable or array): (C,), x's dtype.
        eps (float): added to the variance.

    Returns:
        Variable: x's shape and dtype.

    Raises:
        ValueError: x has fewer than 2 axes, C is not divisible by groups, or the
            shapes of gamma/beta are not (C,).
    """
    x, gamma, beta = mixed_precision.cast_to_float32(x, gamma, beta)
    if x.ndim < 2:
        raise ValueError(f'group_normalization: x must have at least 2 axes, got {x.shape}')
    n_channel = x.shape[1]
    if not isinstance(groups, numbers.Integral) or groups <= 0 or n_channel % groups:
        raise ValueError(f'group_normalization: groups must be a positive divisor of the '
                         f'{n_channel} channels, got {groups!r}')
    if tuple(gamma.shape) != (n_channel,):
        raise ValueError(f'group_normalization: gamma must have shape ({n_channel},), got '
                         f'{gamma.shape}')
    bn_module.check_params('group_normalization', gamma, beta, eps)
    size = 1
    for n in x.shape[2:]:
        size *= n
    m = n_channel // groups * size
    xg = reshape.reshape(x, (x.shape[0], groups, m))
    mean = sum_module.sum(xg, axis=2, keepdims=True) * (1.0 / m)
    centred = xg - mean
    var = sum_module.sum(centred * centred, axis=2, keepdims=True) * (1.0 / m)
    x_hat = reshape.reshape(centred * (var + eps) ** -0.5, x.shape)
    shape = (1, n_channel) + (1,) * (x.ndim - 2)
    return x_hat * reshape.reshape(gamma, shape) + reshape.reshape(beta, shape)
