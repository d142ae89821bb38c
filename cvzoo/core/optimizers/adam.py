"""Adam (Kingma and Ba, ICLR 2015), with AMSGrad and AdamW's decoupled weight decay."""

import math

import numpy

from cvzoo.core import backend
from cvzoo.core.optimizers import optimizer, update_rule


def _fused_twin(grad, lr, one_minus_beta1, one_minus_beta2, eps, eta, weight_decay_rate,
                param, m, v):
    m += one_minus_beta1 * (grad - m)
    v += one_minus_beta2 * (grad * grad - v)
    param -= eta * (lr * m / (numpy.sqrt(v) + eps) + weight_decay_rate * param)


# On a GPU (float32/float64, without AMSGrad) the whole update is one kernel instead of
# about ten.
_fused_update = backend.elementwise_kernel(
    'T grad, T lr, T one_minus_beta1, T one_minus_beta2, T eps, T eta, '
    'T weight_decay_rate', 'T param, T m, T v',
    'm += one_minus_beta1 * (grad - m); v += one_minus_beta2 * (grad * grad - v); '
    'param -= eta * (lr * m / (sqrt(v) + eps) + weight_decay_rate * param);',
    'cvzoo_adam', _fused_twin)


def _learning_rate(hyperparam, t):
    """alpha * sqrt(1 - beta2^t) / (1 - beta1^t): the bias-corrected step (Algorithm 1)."""
    if t == 0:
        raise RuntimeError('Adam: the learning rate is defined from the first update on (t >= 1)')
    fix1 = 1.0 - hyperparam.beta1 ** t
    fix2 = 1.0 - hyperparam.beta2 ** t
    return hyperparam.alpha * math.sqrt(fix2) / fix1


class AdamRule(update_rule.UpdateRule):
    """The update of Adam for one parameter (state: ``m``, ``v``, and ``vhat`` for AMSGrad).

    m += (1 - beta1) (g - m);  v += (1 - beta2) (g^2 - v);  vhat = max(vhat, v) (AMSGrad);
    param -= eta * (lr * m / (sqrt(v or vhat) + eps) + weight_decay_rate * param).
    """

    def state_names(self):
        return ('m', 'v', 'vhat') if self.hyperparam.amsgrad else ('m', 'v')

    @property
    def lr(self):
        """The bias-corrected step size at this rule's update count (a 0-d device array,
        ``bias_corrected_lr``, while a CUDA graph captures the update: see
        cvzoo.core.cuda_graph)."""
        device_lr = getattr(self.hyperparam, 'bias_corrected_lr', None)
        return _learning_rate(self.hyperparam, self.t) if device_lr is None else device_lr

    def update_core(self, param):
        self.update_arrays(param.grad, param.array, self.state)

    def update_arrays(self, grad, array, state):
        """The update of ``array`` (a parameter's, or a flat buffer of several: see
        cvzoo.core.optimizers.multi_tensor) from ``grad``, with the state arrays ``state``."""
        hyperparam = self.hyperparam
        xp = backend.get_array_module(array)
        if xp is not numpy and not hyperparam.amsgrad and array.dtype != numpy.float16:
            _fused_update(grad, self.lr, 1 - hyperparam.beta1, 1 - hyperparam.beta2,
                          hyperparam.eps, hyperparam.eta, hyperparam.weight_decay_rate,
                          array, state['m'], state['v'])
            return
        m, v = state['m'], state['v']
        m += (1 - hyperparam.beta1) * (grad - m)
        v += (1 - hyperparam.beta2) * (grad * grad - v)
        if hyperparam.amsgrad:
            vhat = state['vhat']
            xp.maximum(vhat, v, out=vhat)
            v = vhat
        step = self.lr * m / (xp.sqrt(v) + hyperparam.eps)
        if hyperparam.weight_decay_rate != 0:
            step += hyperparam.weight_decay_rate * array
        array -= hyperparam.eta * step


class Adam(optimizer.Optimizer):
    """Adam; ``weight_decay_rate`` is AdamW's decoupled decay (Loshchilov and Hutter, 2019).

    Args:
        alpha (float): step size; schedule it by assigning ``optimizer.alpha``.
        beta1, beta2 (float): decay of the first and second moment estimates.
        eps (float): added to the denominator for stability.
        eta (float): multiplier of the whole step (AdamW's schedule multiplier).
        weight_decay_rate (float): decoupled weight decay per update.
        amsgrad (bool): use AMSGrad's running maximum of ``v`` (Reddi et al., 2018).

    Attributes:
        lr (float): read-only, the bias-corrected step size alpha * sqrt(1 - beta2^t) /
            (1 - beta1^t) at the optimizer's update count ``t``.
    """

    def __init__(self, alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-8, eta=1.0,
                 weight_decay_rate=0, amsgrad=False):
        super().__init__()
        self.hyperparam.alpha = alpha
        self.hyperparam.beta1 = beta1
        self.hyperparam.beta2 = beta2
        self.hyperparam.eps = eps
        self.hyperparam.eta = eta
        self.hyperparam.weight_decay_rate = weight_decay_rate
        self.hyperparam.amsgrad = amsgrad

    @property
    def lr(self):
        return _learning_rate(self.hyperparam, self.t)

    def create_update_rule(self):
        return AdamRule(self.hyperparam)


class AdamW(Adam):
    """Adam with decoupled weight decay; as Adam, but ``weight_decay_rate`` defaults to 0.01.

    Args: as Adam.
    """

    def __init__(self, alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-8, eta=1.0,
                 weight_decay_rate=0.01, amsgrad=False):
        super().__init__(alpha, beta1, beta2, eps, eta, weight_decay_rate, amsgrad)
