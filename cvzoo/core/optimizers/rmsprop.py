"""RMSprop: ms = alpha * ms + (1 - alpha) * grad^2; param -= lr * grad / (sqrt(ms) + eps)."""

from cvzoo.core.optimizers import hyperparameter, optimizer, update_rule


class RMSpropRule(update_rule.UpdateRule):
    """The update of RMSprop for one parameter (state: ``ms``)."""

    def state_names(self):
        return ('ms',)

    def update_core(self, param):
        hyperparam = self.hyperparam
        ms = self.state['ms']
        grad = param.grad
        ms *= hyperparam.alpha
        ms += (1 - hyperparam.alpha) * grad * grad
        param.array -= hyperparam.lr * grad / (param.xp.sqrt(ms) + hyperparam.eps)


class RMSprop(optimizer.Optimizer):
    """RMSprop (Tieleman and Hinton, 2012, lecture 6.5).

    Args:
        lr (float): learning rate.
        alpha (float): decay of the running mean of the squared gradient.
        eps (float): added to the denominator for stability.
    """

    # NOTE: here alpha is a decay factor in [0, 1], not Adam's step size
    unit_interval = hyperparameter.UNIT_INTERVAL | {'alpha'}

    def __init__(self, lr=0.01, alpha=0.99, eps=1e-8):
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.alpha = alpha
        self.hyperparam.eps = eps

    def create_update_rule(self):
        return RMSpropRule(self.hyperparam)
