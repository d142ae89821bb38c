"""Stochastic gradient descent: param -= lr * grad."""

from cvzoo.core.optimizers import optimizer, update_rule


class SGDRule(update_rule.UpdateRule):
    """The update of SGD for one parameter."""

    def update_core(self, param):
        self.update_arrays(param.grad, param.array, self.state)

    def update_arrays(self, grad, array, state):
        """The update of ``array`` (a parameter's, or a flat buffer of several: see
        cvzoo.core.optimizers.multi_tensor) from ``grad``."""
        array -= self.hyperparam.lr * grad


class SGD(optimizer.Optimizer):
    """Vanilla stochastic gradient descent.

    Args:
        lr (float): learning rate.
    """

    def __init__(self, lr=0.01):
        super().__init__()
        self.hyperparam.lr = lr

    def create_update_rule(self):
        return SGDRule(self.hyperparam)
