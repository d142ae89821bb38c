"""Nesterov's accelerated gradient, in the velocity form Chainer uses."""

from cvzoo.core.optimizers import optimizer, update_rule


class NesterovAGRule(update_rule.UpdateRule):
    """The update of NesterovAG for one parameter (state: ``v``).

    v = momentum * v - lr * grad;
    param += momentum^2 * v - (1 + momentum) * lr * grad.
    """

    def state_names(self):
        return ('v',)

    def update_core(self, param):
        lr, momentum = self.hyperparam.lr, self.hyperparam.momentum
        v = self.state['v']
        v *= momentum
        v -= lr * param.grad
        param.array += momentum * momentum * v
        param.array -= (1 + momentum) * lr * param.grad


class NesterovAG(optimizer.Optimizer):
    """Nesterov's accelerated gradient (Sutskever et al., ICML 2013, eq. 3-4).

    Args:
        lr (float): learning rate.
        momentum (float): decay of the velocity.
    """

    def __init__(self, lr=0.01, momentum=0.9):
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self):
        return NesterovAGRule(self.hyperparam)
