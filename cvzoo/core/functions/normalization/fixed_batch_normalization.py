"""fixed_batch_normalization: normalise with given statistics (inference)."""

import numpy

from cvzoo.core import backend, function_node, mixed_precision, parallel
from cvzoo.core.cudnn import batch_normalization as cudnn_bn
from cvzoo.core.functions.array import reshape
from cvzoo.core.functions.math import sum as sum_module
from cvzoo.core.functions.normalization import batch_normalization as bn_module


class FixedBatchNormalization(function_node.FunctionNode):
    def __init__(self, eps, axes):
        self.eps = eps
        self.axes = axes

    def forward(self, inputs):
        self.retain_inputs((0, 1, 3, 4))
        y = cudnn_bn.forward_inference(*inputs, self.eps, self.axes)  # None off cuDNN
        return (normalize_array(*inputs, self.eps, self.axes) if y is None else y),

    def backward(self, indexes, grad_outputs):
        x, gamma, mean, var = self.get_retained_inputs()
        gy, = grad_outputs
        shape = bn_module.param_shape(x.shape, self.axes)
        inv_std = (var + self.eps) ** -0.5
        x_hat = (x - reshape.reshape(mean, shape)) * reshape.reshape(inv_std, shape)
        gbeta = sum_module.sum(gy, axis=self.axes)
        ggamma = sum_module.sum(gy * x_hat, axis=self.axes)
        grads = {
            0: gy * reshape.reshape(gamma * inv_std, shape),
            1: ggamma,
            2: gbeta,
            3: -gbeta * gamma * inv_std,
            4: ggamma * gamma * inv_std * inv_std * -0.5,
        }
        return tuple(grads[i] for i in indexes)


def normalize_array(x, gamma, beta, mean, var, eps, axes, out=None, relu=False):
    """The forward of fixed_batch_normalization on arrays, without a graph.

    ``y = x * scale + shift`` with ``scale = gamma / sqrt(var + eps)`` and ``shift =
    beta - mean * scale``: two passes over x, the cheapest form for inference, shared
    among threads in slices (parallel.elementwise). With ``out=x`` it overwrites x (the
    inference path of Conv2DBNActiv, on a convolution output nothing else holds), with
    the same result as without.

    Args:
        x, gamma, beta, mean, var (array): as in fixed_batch_normalization.
        eps (float): added to the variance.
        axes (tuple of int): the normalised axes of x (see reduction_axes).
        out (array or None): where to write y, x's shape and dtype.
        relu (bool): also apply ``max(y, 0)``, in the same pass over each slice.

    Returns:
        array: y.
    """
    xp = backend.get_array_module(x)
    dtype = x.dtype.type
    scale = gamma * (var + dtype(eps)) ** dtype(-0.5)
    shift = beta - mean * scale
    shape = bn_module.param_shape(x.shape, axes)
    scale, shift = scale.reshape(shape), shift.reshape(shape)
    if out is None:
        out = xp.empty_like(x, dtype=numpy.result_type(x, scale))

    def normalize(y, x, scale, shift):
        xp.multiply(x, scale, out=y)
        y += shift
        if relu:
            xp.maximum(y, dtype(0), out=y)

    if xp is numpy:
        parallel.elementwise(normalize, out, x, scale, shift)
    else:
        normalize(out, x, scale, shift)
    return out


def fixed_batch_normalization(x, gamma, beta, mean, var, eps=2e-5, axis=None):
    """Batch normalisation with fixed statistics, as used at inference.

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta``. Gradients flow to all five
    inputs, and the backward supports double backprop.

    Args:
        x (Variable or array): (N, C, ...) float.
        gamma, beta (Variable or array): scale and shift, (C,) by default, x's dtype.
        mean, var (Variable or array): the statistics, gamma's shape and dtype.
        eps (float): added to the variance.
        axis (None, int or tuple of int): as in batch_normalization.

    Returns:
        Variable: x's shape and dtype.

    Raises:
        ValueError: the shapes of gamma, beta, mean or var do not fit x.
    """
    x, gamma, beta, mean, var = mixed_precision.cast_to_float32(x, gamma, beta, mean, var)
    axes = bn_module.reduction_axes('fixed_batch_normalization', x, gamma, axis)
    bn_module.check_params('fixed_batch_normalization', gamma, beta, eps)
    for name, array in (('mean', mean), ('var', var)):
        if tuple(array.shape) != tuple(gamma.shape):
            raise ValueError(f'fixed_batch_normalization: {name} must have gamma\'s shape '
                             f'{gamma.shape}, got {array.shape}')
    return FixedBatchNormalization(float(eps), axes).apply((x, gamma, beta, mean, var))[0]
