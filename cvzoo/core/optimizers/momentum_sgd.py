"""Momentum SGD: v = momentum * v - lr * grad; param += v."""

from cvzoo.core.optimizers import optimizer, update_rule


class MomentumSGDRule(update_rule.UpdateRule):
    """The update of MomentumSGD for one parameter (state: ``v``)."""

    def state_names(self):
        return ('v',)

    def update_core(self, param):
        v = self.state['v']
        v *= self.hyperparam.momentum
        v -= self.hyperparam.lr * param.grad
        param.array += v


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
