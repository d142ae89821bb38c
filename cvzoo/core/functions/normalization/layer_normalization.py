"""layer_normalization: normalise each sample over its last axis."""

from cvzoo.core import mixed_precision
from cvzoo.core.functions.math import sum as sum_module
from cvzoo.core.functions.normalization import batch_normalization as bn_module


def layer_normalization(x, gamma, beta, eps=1e-5):
    """Layer normalisation (Ba et al., Layer Normalization, 2016) over the last axis.

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta`` with the mean and (biased)
    variance of each row along the last axis, as Chainer's (N, units) form. Composed of
    differentiable functions, so it supports double backprop.

    Args:
        x (Variable or array): (..., units) float.
        gamma, beta (Variable or array): (units,), x's dtype.
        eps (float): added to the variance.

    Returns:
        Variable: x's shape and dtype.

    Raises:
        ValueError: the shapes of gamma/beta are not (units,) or eps is not positive.
    """
    x, gamma, beta = mixed_precision.cast_to_float32(x, gamma, beta)
    if x.ndim < 1 or tuple(gamma.shape) != (x.shape[-1],):
        raise ValueError(f'layer_normalization: gamma must have shape (x.shape[-1],) for x '
                         f'{x.shape}, got {gamma.shape}')
    bn_module.check_params('layer_normalization', gamma, beta, eps)
    m = x.shape[-1]
    mean = sum_module.sum(x, axis=-1, keepdims=True) * (1.0 / m)
    centred = x - mean
    var = sum_module.sum(centred * centred, axis=-1, keepdims=True) * (1.0 / m)
    return centred * (var + eps) ** -0.5 * gamma + beta
