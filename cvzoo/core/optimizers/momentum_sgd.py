"""Momentum SGD: v = momentum * v - lr * grad; param += v."""

import numpy

from cvzoo.core import backend
from cvzoo.core.optimizers import optimizer, update_rule


def _update(grad, lr, momentum, param, v):
    v *= momentum
    v -= lr * grad
    param += v


# On a GPU the whole update is one kernel (the expression above launches four).
_fused_update = backend.elementwise_kernel(
    'T grad, T lr, T momentum', 'T param, T v',
    'v = momentum * v - lr * grad; param += v;',
    'cvzoo_momentum_sgd', _update)


class MomentumSGDRule(update_rule.UpdateRule):
    """The update of MomentumSGD for one parameter (state: ``v``)."""

    def state_names(self):
        return ('v',)

    def update_core(self, param):
        self.update_arrays(param.grad, param.array, self.state)

    def update_arrays(self, grad, array, state):
        """The update of ``array`` (a parameter's, or a flat buffer of several: see
        cvzoo.core.optimizers.multi_tensor) from ``grad``, with the state arrays ``state``."""
        update = _update if isinstance(array, numpy.ndarray) else _fused_update
        update(grad, self.hyperparam.lr, self.hyperparam.momentum, array, state['v'])


class MomentumSGD(optimizer.Optimizer):
    """Stochastic gradient descent with classical momentum.

    Args:
        lr (float): learning rate.
        momentum (float): decay of the velocity.
    """

    def __init__(self, lr=0.01, momentum=0.9):
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self):
        return MomentumSGDRule(self.hyperparam)
