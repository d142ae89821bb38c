"""WarmupShift: raise the value linearly from ``warmup_start`` to ``init``, then keep it."""

from cvzoo.core.training.extensions import value_shift


class WarmupShift(value_shift.ValueShift):
    """Linear warmup over ``warmup_iter`` calls (Goyal et al. 2017, "Accurate, Large
    Minibatch SGD: Training ImageNet in 1 Hour", section 2.2, gradual warmup).

    Args:
        attr (str): the optimizer attribute.
        warmup_start (float): the value at t = 0.
        warmup_iter (int): calls until the value reaches ``init``.
        init (float or None): the value after warmup (default: the optimizer's).
        optimizer: default the updater's 'main' optimizer.

    >>> WarmupShift('lr', 0.0, 4, init=0.5).compute(2)
    0.25
    """

    def __init__(self, attr, warmup_start, warmup_iter, init=None, optimizer=None):
        if int(warmup_iter) < 1:
            raise ValueError(f'warmup_iter: expected a positive int, got {warmup_iter}')
        super().__init__(attr, init, optimizer)
        self.warmup_start = warmup_start
        self.warmup_iter = int(warmup_iter)

    def compute(self, t):
        if t >= self.warmup_iter:
            return self.init
        return self.warmup_start + (self.init - self.warmup_start) * t / self.warmup_iter
