"""batch_normalization: normalise with the statistics of the batch (training)."""

import functools
import numbers

import numpy

from cvzoo.core import backend, function_node, mixed_precision, parallel
from cvzoo.core.config import config
from cvzoo.core.cudnn import batch_normalization as cudnn_bn


def reduction_axes(what, x, gamma, axis):
    """The axes of ``x`` that are normalised over; ``gamma`` holds the others.

    With ``axis=None``: axis 0 and every axis after the ones ``gamma`` covers (the
    channel axis 1 for a (C,) gamma), as Chainer's.
    """
    if axis is None:
        axes = _default_axes(x.ndim, gamma.ndim)
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if any(not -x.ndim <= a < x.ndim for a in axes):
            raise ValueError(f'{what}: axis {axis} is out of range for x of {x.ndim} axes')
        axes = tuple(sorted(set(a % x.ndim for a in axes)))
    kept = _kept_shape(x.shape, axes)
    if kept != tuple(gamma.shape):
        raise ValueError(
            f'{what}: gamma must have shape {kept} (x {x.shape} without axes {axes}), '
            f'got {gamma.shape}')
    return axes


# NOTE: the shape helpers below are cached: they run for every normalisation of every
# step with the same few shapes, and a cache hit is one call instead of a generator's
# call per axis.

@functools.lru_cache(maxsize=64)
def _default_axes(ndim, gamma_ndim):
    """Axis 0 and the axes after the ``gamma_ndim`` ones that gamma covers."""
    return (0,) + tuple(range(1 + gamma_ndim, ndim))


@functools.lru_cache(maxsize=1024)
def _kept_shape(x_shape, axes):
    return tuple(x_shape[i] for i in range(len(x_shape)) if i not in axes)


@functools.lru_cache(maxsize=1024)
def param_shape(x_shape, axes):
    """The shape that broadcasts a parameter against x (size 1 on the reduced axes)."""
    return tuple(1 if i in axes else n for i, n in enumerate(x_shape))


@functools.lru_cache(maxsize=64)
def _inner_sum_subscripts(ndim, axes):
    letters = 'abcdefghijklmnopqrstuvwxyz'[:ndim]
    kept = ''.join(c for i, c in enumerate(letters) if i not in axes)
    return f'{letters},{letters}->{kept}'


def _inner_sum(a, b, axes):
    """``sum(a * b)`` over ``axes`` without allocating the product."""
    xp = backend.get_array_module(a)
    return xp.einsum(_inner_sum_subscripts(a.ndim, axes), a, b)


def _mean_into(x, axes, out, count):
    """``x.mean(axis=axes, keepdims=True, out=out)``, ``count`` values per mean.

    NOTE: what NumPy's ``mean`` does for float32 and float64 (a sum, then a division by
    the count as an intp), in two calls instead of its Python wrapper's dozen.
    """
    if type(x) is numpy.ndarray and x.dtype.kind == 'f' and x.dtype.itemsize >= 4:
        numpy.add.reduce(x, axis=axes, keepdims=True, out=out)
        numpy.true_divide(out, numpy.intp(count), out=out, casting='unsafe')
    else:
        x.mean(axis=axes, keepdims=True, out=out)


def _by_channel_slices(func, out, *operands):
    """``func(out, *operands)``, on NumPy shared among threads by slices of channels.

    The arrays are x-shaped or parameter-shaped (size 1 on the normalised axes); one
    kept axis (a (C,) gamma) is cut, more run as one call.
    """
    kept = [axis for axis, size in enumerate(operands[-1].shape) if size > 1]
    if backend.get_array_module(out) is not numpy or len(kept) != 1:
        func(out, *operands)
        return
    parallel.elementwise(func, out, *operands, axis=kept[0])


# --- fused kernels of the GPU path -----------------------------------------------------
# On a GPU each array operation is one kernel launch, and a training step is bound by
# the host's launches: the generic code below launches 18 kernels per forward and 13
# per backward, these 5 and 3. float32 and float64 only (other dtypes take the generic
# code). Each has its NumPy twin, which the CuPy stand-in runs.

_sum_squared_deviation = backend.reduction_kernel(
    'T x, T mean', 'T s', '(x - mean) * (x - mean)', 'a + b', 's = a', '0',
    'cvzoo_bn_sum_squared_deviation',
    lambda x, mean, axis, keepdims: ((x - mean) ** 2).sum(axis=axis, keepdims=keepdims))


def _statistics_twin(sq, gamma, m, eps):
    var = sq / m
    inv_std = 1 / numpy.sqrt(var + eps)
    return var, inv_std, gamma * inv_std


_statistics = backend.elementwise_kernel(
    'T sq, T gamma, T m, T eps', 'T var, T inv_std, T scale',
    'var = sq / m; inv_std = (T)1 / sqrt(var + eps); scale = gamma * inv_std',
    'cvzoo_bn_statistics', _statistics_twin)

_normalize = backend.elementwise_kernel(
    'T x, T mean, T scale, T beta', 'T y', 'y = (x - mean) * scale + beta',
    'cvzoo_bn_normalize', lambda x, mean, scale, beta: (x - mean) * scale + beta)


def _running_twin(mean, var, keep, fresh, unbias, running_mean, running_var):
    running_mean[...] = keep * running_mean + fresh * mean
    running_var[...] = keep * running_var + fresh * (var * unbias)


_update_running = backend.elementwise_kernel(
    # NOTE: no parameter may be named ``new``: the source is CUDA C++
    'T mean, T var, T keep, T fresh, T unbias', 'T running_mean, T running_var',
    'running_mean = keep * running_mean + fresh * mean; '
    'running_var = keep * running_var + fresh * (var * unbias)',
    'cvzoo_bn_update_running', _running_twin)

_sum_gy_x_hat = backend.reduction_kernel(
    'T gy, T x, T mean, T inv_std', 'T s', 'gy * ((x - mean) * inv_std)', 'a + b', 's = a',
    '0', 'cvzoo_bn_sum_gy_x_hat',
    lambda gy, x, mean, inv_std, axis, keepdims: (gy * ((x - mean) * inv_std)).sum(
        axis=axis, keepdims=keepdims))


def _grad_x_twin(x, gy, mean, inv_std, gamma, ggamma, gbeta, m):
    x_hat = (x - mean) * inv_std
    return (gy - (x_hat * (ggamma / m) + gbeta / m)) * (gamma * inv_std)


_grad_x = backend.elementwise_kernel(
    'T x, T gy, T mean, T inv_std, T gamma, T ggamma, T gbeta, T m', 'T gx',
    'T x_hat = (x - mean) * inv_std; '
    'gx = (gy - (x_hat * (ggamma / m) + gbeta / m)) * (gamma * inv_std)',
    'cvzoo_bn_grad_x', _grad_x_twin)


def _fused_on_gpu(x, xp):
    return xp is not numpy and x.dtype.kind == 'f' and x.dtype.itemsize >= 4


class BatchNormalization(function_node.FunctionNode):
    def __init__(self, eps, axes, running_mean=None, running_var=None, decay=0.9):
        self.eps = eps
        self.axes = axes
        self.running_mean = running_mean
        self.running_var = running_var
        self.decay = decay

    def forward(self, inputs):
        x, gamma, beta = inputs
        self.retain_inputs((0, 1))
        done = None if x.__class__ is numpy.ndarray else cudnn_bn.forward_training(
            x, gamma, beta, self.eps, self.axes, self.running_mean, self.running_var,
            self.decay)  # None off cuDNN
        if done is not None:
            self.running_mean = self.running_var = None
            y, self.mean, self.inv_std = done
            return y,
        shape = param_shape(x.shape, self.axes)
        m = x.size // max(gamma.size, 1)
        xp = backend.get_array_module(x)
        if _fused_on_gpu(x, xp):
            return self._forward_fused(x, gamma.reshape(shape), beta.reshape(shape), m),
        y = xp.empty_like(x)
        mean = xp.empty(shape, dtype=x.dtype)
        var = xp.empty(shape, dtype=x.dtype)
        self.inv_std = xp.empty(shape, dtype=x.dtype)
        gamma, beta = gamma.reshape(shape), beta.reshape(shape)

        def normalize(y, x, gamma, beta, mean, var, inv_std):
            # all of it on one slice of channels, which stays in cache between passes
            _mean_into(x, self.axes, mean, m)
            xp.subtract(x, mean, out=y)
            var[...] = _inner_sum(y, y, self.axes).reshape(var.shape) / x.dtype.type(m)
            inv_std[...] = (var + x.dtype.type(self.eps)) ** x.dtype.type(-0.5)
            y *= gamma * inv_std
            y += beta

        _by_channel_slices(normalize, y, x, gamma, beta, mean, var, self.inv_std)
        self.mean = mean
        self._update_running(mean, var, m)
        return y,

    def _forward_fused(self, x, gamma, beta, m):
        """The forward on a GPU in five kernels (see _statistics)."""
        xp = backend.get_array_module(x)
        mean = xp.mean(x, axis=self.axes, keepdims=True)
        sq = _sum_squared_deviation(x, mean, axis=self.axes, keepdims=True)
        var, self.inv_std, scale = _statistics(sq, gamma, m, self.eps)
        y = _normalize(x, mean, scale, beta)
        self.mean = mean
        running_mean, running_var = self.running_mean, self.running_var
        if (running_mean is None or running_var is None or running_mean.dtype != x.dtype
                or running_var.dtype != x.dtype):
            self._update_running(mean, var, m)
            return y
        shape = self.running_mean.shape
        _update_running(mean.reshape(shape), var.reshape(shape), self.decay, 1 - self.decay,
                        m / max(m - 1, 1), self.running_mean, self.running_var)
        self.running_mean = self.running_var = None
        return y

    def _update_running(self, mean, var, m):
        keep, new = self.decay, 1 - self.decay
        if self.running_mean is not None:
            self.running_mean *= keep
            self.running_mean += new * mean.reshape(self.running_mean.shape)
        if self.running_var is not None:
            unbiased = var * (m / max(m - 1, 1))
            self.running_var *= keep
            self.running_var += new * unbiased.reshape(self.running_var.shape)
        # the running arrays belong to the caller; the node does not keep them
        self.running_mean = self.running_var = None

    def backward(self, indexes, grad_outputs):
        grad = _BatchNormalizationGrad(self.axes, self.mean, self.inv_std)
        if config.enable_backprop:
            x, gamma = self.get_retained_inputs()
            gx, ggamma, gbeta = grad.apply((x, gamma, grad_outputs[0]))
        else:  # first order: the arrays, without a node of its own
            x, gamma = self.retained_input_arrays()
            gx, ggamma, gbeta = grad.forward((x, gamma, grad_outputs[0].array))
        grads = gx, ggamma, gbeta
        return grads if indexes == (0, 1, 2) else tuple(grads[i] for i in indexes)


class _BatchNormalizationGrad(function_node.FunctionNode):
    """Closed-form gradients of batch normalisation (one pass over x, no graph)."""

    def __init__(self, axes, mean, inv_std):
        self.axes = axes
        self.mean = mean
        self.inv_std = inv_std

    def forward(self, inputs):
        x, gamma, gy = inputs
        done = None if x.__class__ is numpy.ndarray else cudnn_bn.backward(
            x, gamma, gy, self.mean, self.inv_std, self.axes)
        if done is not None:  # None off cuDNN
            return done
        xp = backend.get_array_module(x)
        m = x.dtype.type(x.size // max(gamma.size, 1))
        shape = param_shape(x.shape, self.axes)
        if _fused_on_gpu(x, xp) and gy.dtype == x.dtype:
            return self._forward_fused(x, gamma.reshape(shape), gy, m)
        gx = xp.empty_like(x)
        ggamma = xp.empty(shape, dtype=x.dtype)
        gbeta = xp.empty(shape, dtype=x.dtype)

        def gradients(gx, x, gy, gamma, mean, inv_std, ggamma, gbeta):
            xp.subtract(x, mean, out=gx)
            gx *= inv_std  # x_hat
            gbeta[...] = gy.sum(axis=self.axes, keepdims=True)
            ggamma[...] = _inner_sum(gy, gx, self.axes).reshape(ggamma.shape)
            # gx = gamma / std * (gy - (x_hat * ggamma + gbeta) / m), in x_hat's buffer
            gx *= ggamma / m
            gx += gbeta / m
            xp.subtract(gy, gx, out=gx)
            gx *= gamma * inv_std

        _by_channel_slices(gradients, gx, x, gy, gamma.reshape(shape), self.mean,
                           self.inv_std, ggamma, gbeta)
        kept = _kept_shape(shape, self.axes)
        return gx, ggamma.reshape(kept), gbeta.reshape(kept)

    def _forward_fused(self, x, gamma, gy, m):
        """The gradients on a GPU in three kernels."""
        axes = self.axes
        gbeta = gy.sum(axis=axes, keepdims=True)
        ggamma = _sum_gy_x_hat(gy, x, self.mean, self.inv_std, axis=axes, keepdims=True)
        gx = _grad_x(x, gy, self.mean, self.inv_std, gamma, ggamma, gbeta, m)
        kept = _kept_shape(gamma.shape, axes)
        return gx, ggamma.reshape(kept), gbeta.reshape(kept)

    def backward(self, indexes, grad_outputs):
        raise NotImplementedError(
            'batch_normalization: double backprop is not supported (its gradient is '
            'computed in closed form by _BatchNormalizationGrad)')


def batch_normalization(x, gamma, beta, eps=2e-5, running_mean=None, running_var=None,
                        decay=0.9, axis=None):
    """Batch normalisation with the batch's own statistics (Ioffe and Szegedy, ICML 2015).

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta``, with mean and (biased) var
    taken over every axis but the ones ``gamma`` covers. When ``running_mean`` and
    ``running_var`` are given they are updated IN PLACE, as Chainer does:
    ``running = decay * running + (1 - decay) * batch``, with the unbiased variance
    ``var * m / (m - 1)`` (m values per channel).

    The gradient is computed in closed form by a dedicated node; it cannot be
    differentiated again (double backprop raises NotImplementedError).

    Args:
        x (Variable or array): (N, C, ...) float.
        gamma (Variable or array): scale, (C,) by default, x's dtype.
        beta (Variable or array): shift, gamma's shape and dtype.
        eps (float): added to the variance.
        running_mean (array or None): gamma's shape; updated in place.
        running_var (array or None): gamma's shape; updated in place.
        decay (float): weight of the old running value, in [0, 1].
        axis (None, int or tuple of int): the axes to normalise over; None means axis 0
            and the axes after those gamma covers (axes (0, 2, 3) of NCHW).

    Returns:
        Variable: x's shape and dtype.

    Raises:
        ValueError: shapes of gamma/beta/running arrays do not fit x, or eps/decay are
            out of range.
    """
    x, gamma, beta = mixed_precision.cast_to_float32(x, gamma, beta)
    axes = reduction_axes('batch_normalization', x, gamma, axis)
    check_params('batch_normalization', gamma, beta, eps)
    if not (type(decay) is float or isinstance(decay, numbers.Real)) or not 0 <= decay <= 1:
        raise ValueError(f'batch_normalization: decay must be in [0, 1], got {decay!r}')
    for name, array in (('running_mean', running_mean), ('running_var', running_var)):
        if array is not None and tuple(array.shape) != tuple(gamma.shape):
            raise ValueError(f'batch_normalization: {name} must have gamma\'s shape '
                             f'{gamma.shape}, got {array.shape}')
    node = BatchNormalization(float(eps), axes, running_mean, running_var, float(decay))
    return node.apply((x, gamma, beta))[0]


def check_params(what, gamma, beta, eps):
    """Raise a ValueError when beta does not match gamma or eps is not positive."""
    if tuple(beta.shape) != tuple(gamma.shape):
        raise ValueError(f'{what}: beta must have gamma\'s shape {gamma.shape}, got {beta.shape}')
    if not (type(eps) is float or isinstance(eps, numbers.Real)) or eps <= 0:
        raise ValueError(f'{what}: eps must be a positive number, got {eps!r}')
