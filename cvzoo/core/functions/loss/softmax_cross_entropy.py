"""softmax_cross_entropy: the classification loss on raw scores."""

import numpy

from cvzoo.core import backend, function_node, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.activation import log_softmax as log_softmax_module
from cvzoo.core.functions.activation import softmax as softmax_module
from cvzoo.core.functions.array import reshape

_REDUCE = ('mean', 'no')


class _SoftmaxFromCache(softmax_module.Softmax):
    """Softmax whose forward hands back a softmax computed before (cache_score)."""

    def __init__(self, axis, cache):
        super().__init__(axis)
        self.cache = cache

    def forward(self, inputs):
        self.retain_outputs((0,))
        y, self.cache = self.cache, None
        return y,


class SoftmaxCrossEntropy(function_node.FunctionNode):
    def __init__(self, normalize, cache_score, class_weight, ignore_label, reduce):
        self.normalize = normalize
        self.cache_score = cache_score
        self.class_weight = class_weight
        self.ignore_label = ignore_label
        self.reduce = reduce

    def forward(self, inputs):
        x, t = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0, 1))
        log_y = log_softmax_module.log_softmax_array(x, 1)
        self.score = xp.exp(log_y) if self.cache_score else None
        valid = t != self.ignore_label
        if xp is numpy:
            safe_t = xp.where(valid, t, 0)  # labels were range-checked on the host
        else:
            # labels on a GPU are not range-checked on the host (that would sync every
            # step): a label out of range makes the loss NaN instead of a wrong number
            out_of_range = valid & ((t < 0) | (t >= x.shape[1]))
            safe_t = xp.where(valid & ~out_of_range, t, 0)
        log_p = xp.take_along_axis(log_y, xp.expand_dims(safe_t, 1), axis=1)[:, 0]
        if xp is not numpy:
            log_p = xp.where(out_of_range, xp.nan, log_p)
        # weight of each element: its class weight, 0 where ignored
        self.coeff = valid.astype(x.dtype)
        if self.class_weight is not None:
            self.coeff *= self.class_weight[safe_t]
        loss = -log_p * self.coeff
        if self.reduce == 'no':
            return loss,
        denominator = self._denominator(xp, valid, x.shape[0], x.dtype)
        self.coeff /= denominator
        return xp.asarray(loss.sum() / denominator, dtype=x.dtype),

    def _denominator(self, xp, valid, batch_size, dtype):
        """The divisor of the mean; on the device with x, so reading it costs no sync."""
        if self.normalize:
            return xp.maximum(valid.sum(), 1).astype(dtype)
        return dtype.type(max(batch_size, 1))

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        gy, = grad_outputs
        xp = x.xp
        if self.score is not None:
            y = _SoftmaxFromCache(1, self.score).apply((x,))[0]
            self.score = None
        else:
            y = softmax_module.softmax(x, axis=1)
        class_ids = xp.arange(x.shape[1]).reshape((1, -1) + (1,) * (x.ndim - 2))
        one_hot = xp.asarray(class_ids == xp.expand_dims(t.array, 1), dtype=x.dtype)
        coeff = variable_module.Variable(self.coeff, requires_grad=False)
        g = reshape.reshape(gy * coeff, (t.shape[0], 1) + t.shape[1:])
        return (y - variable_module.Variable(one_hot, requires_grad=False)) * g, None


def softmax_cross_entropy(x, t, normalize=True, cache_score=True, class_weight=None,
                          ignore_label=-1, reduce='mean'):
    """Cross entropy between ``softmax(x)`` along axis 1 and integer labels ``t``.

    The loss of one element is ``-class_weight[t] * log(softmax(x)[t])``, computed with a
    stable log-sum-exp (finite for logits of any size). Elements whose label is
    ``ignore_label`` give 0. Supports double backprop.

    Args:
        x (Variable or array): (N, C) or (N, C, d1, d2, ...) float scores.
        t (Variable or array): (N,) or (N, d1, d2, ...) int32 labels in [0, C), or
            ``ignore_label``.
        normalize (bool): with ``reduce='mean'``, divide the sum by the number of
            non-ignored elements (True) or by N (False).
        cache_score (bool): keep the softmax from forward for backward (faster, uses
            memory); otherwise backward computes it again.
        class_weight (array or None): (C,) weight of each class, x's dtype.
        ignore_label (int): label value to skip.
        reduce (str): ``'mean'`` gives a 0-d loss; ``'no'`` gives the loss of each
            element, of t's shape.

    Returns:
        Variable: 0-d, or t's shape with ``reduce='no'``; x's dtype.

    Raises:
        ValueError: shapes do not fit, ``reduce`` is unknown, or a label is out of range.
        TypeError: ``t`` is not an integer array.
    """
    x, = mixed_precision.cast_to_float32(x)
    x_array, t_array = variable_module.as_array(x), variable_module.as_array(t)
    _check_arguments(x_array, t_array, class_weight, ignore_label, reduce)
    # a class weight given on the host goes to x's device once, explicitly
    class_weight = backend.on_device_of(class_weight, x_array)
    node = SoftmaxCrossEntropy(bool(normalize), bool(cache_score), class_weight,
                               int(ignore_label), reduce)
    return node.apply((x, t))[0]


def _check_arguments(x, t, class_weight, ignore_label, reduce):
    if reduce not in _REDUCE:
        raise ValueError(f"softmax_cross_entropy: reduce must be 'mean' or 'no', got {reduce!r}")
    if t.dtype.kind not in 'iu':
        raise TypeError(f'softmax_cross_entropy: t must be an integer array, got {t.dtype}')
    if x.ndim < 2 or t.shape != x.shape[:1] + x.shape[2:]:
        raise ValueError(
            f'softmax_cross_entropy: t must have the shape of x without axis 1; got x '
            f'{x.shape} and t {t.shape}')
    n_class = x.shape[1]
    if class_weight is not None and tuple(class_weight.shape) != (n_class,):
        raise ValueError(f'softmax_cross_entropy: class_weight must have shape ({n_class},), '
                         f'got {class_weight.shape}')
    if class_weight is not None and numpy.dtype(class_weight.dtype) != x.dtype:
        raise TypeError(f'softmax_cross_entropy: class_weight must have x\'s dtype {x.dtype}, '
                        f'got {class_weight.dtype}')
    if backend.get_array_module(t) is not numpy:
        return  # range-checked in forward without a sync (NaN loss)
    labels = t[t != ignore_label]
    if labels.size and (labels.min() < 0 or labels.max() >= n_class):
        raise ValueError(
            f'softmax_cross_entropy: labels of t must lie in [0, {n_class}) or be '
            f'ignore_label={ignore_label}; got values from {labels.min()} to {labels.max()}')
