"""Optimizer hooks: callables ``hook(optimizer)`` run before each update.

Add one with ``optimizer.add_hook(WeightDecay(5e-4))``.
"""

import math

import numpy

from cvzoo.core import backend
from cvzoo.core.optimizers import hyperparameter


def _params_with_grad(optimizer):
    """The parameters that have a gradient, each yielded with its device current."""
    for param in optimizer.target.params(include_uninit=False):
        if param.grad is not None:
            with backend.using_device_of(param.array):
                yield param


class WeightDecay:
    """L2 regularisation: add ``rate * param`` to each gradient.

    Args:
        rate (float): the coefficient, a finite number >= 0 (else UsageError).
    """

    name = 'WeightDecay'
    timing = 'pre'

    def __init__(self, rate):
        self.rate = hyperparameter.check_hyperparameter('rate', rate)

    def __call__(self, optimizer):
        for param in _params_with_grad(optimizer):
            self.decay_arrays(param.grad, param.array)

    def decay_arrays(self, grad, array):
        """Add the decay of ``array`` to ``grad`` in place (a parameter's arrays, or the
        flat buffers of a multi-tensor update)."""
        grad += self.rate * array


class GradientClipping:
    """Scale all gradients down so that their global L2 norm is at most ``threshold``.

    Args:
        threshold (float): the largest allowed norm.
    """

    name = 'GradientClipping'
    timing = 'pre'

    def __init__(self, threshold):
        self.threshold = threshold

    def __call__(self, optimizer):
        # the squared norm is summed where the gradients live; on a GPU the scale is
        # applied without reading the norm on the host (no sync per step)
        params, squares = [], []
        for param in _params_with_grad(optimizer):
            params.append(param)
            squares.append((param.grad * param.grad).sum())
        if not params:
            return
        first = backend.get_device_from_array(params[0].grad)
        xp = first.xp
        with first:
            total = sum(backend.to_device(s, first).astype(numpy.float64) for s in squares)
            if xp is numpy:
                norm = math.sqrt(float(total))
                if norm <= self.threshold:
                    return
                scale = self.threshold / norm
            else:
                scale = xp.minimum(1.0, self.threshold / xp.maximum(xp.sqrt(total), 1e-30))
        for param in params:
            with backend.using_device_of(param.grad):
                if xp is numpy:
                    param.grad *= scale
                else:
                    param.grad *= backend.to_device(scale, param.device).astype(param.dtype)


class GradientLARS:
    """Layer-wise adaptive rate scaling (You et al., 2017, arXiv:1708.03888).

    For each parameter whose norm exceeds ``threshold``, the gradient (plus
    ``weight_decay * param``) is scaled by ||param|| / (eps + ||grad|| + weight_decay *
    ||param||); other gradients only get the weight decay added.

    Args:
        threshold (float): parameters with a smaller norm are not rescaled.
        weight_decay (float): L2 coefficient added to the gradient.
        eps (float): added to the denominator.
    """

    name = 'GradientLARS'
    timing = 'pre'

    def __init__(self, threshold=1e-2, weight_decay=0.0, eps=1e-9):
        self.threshold = threshold
        self.weight_decay = weight_decay
        self.eps = eps

    def __call__(self, optimizer):
        for param in _params_with_grad(optimizer):
            xp = param.xp
            param_norm = xp.sqrt((param.array * param.array).sum())
            grad_norm = xp.sqrt((param.grad * param.grad).sum())
            local_rate = param_norm / (self.eps + grad_norm + self.weight_decay * param_norm)
            rate = xp.where(param_norm > self.threshold, local_rate, 1.0).astype(param.dtype)
            param.grad += self.weight_decay * param.array
            param.grad *= rate
