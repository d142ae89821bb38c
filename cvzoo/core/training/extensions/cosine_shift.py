"""CosineShift: cosine annealing (with an optional linear warmup)."""

import math

from cvzoo.core.training.extensions import value_shift


class CosineShift(value_shift.ValueShift):
    """Cosine annealing from ``init`` to ``min_value`` over ``t_max`` calls.

    Loshchilov and Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts", ICLR
    2017, eq. 5 (one cycle, no restart). With ``warmup_iter > 0`` the value first rises
    linearly from ``warmup_start`` to ``init``; the cosine then runs over the remaining
    ``t_max - warmup_iter`` calls::

        value = min_value + (init - min_value) * (1 + cos(pi * s / S)) / 2,
        s = t - warmup_iter, S = t_max - warmup_iter; t past t_max keeps min_value.

    Args:
        attr (str): the optimizer attribute.
        t_max (int): the call count at which ``min_value`` is reached.
        min_value (float): the final value.
        init (float or None): the peak value (default: the optimizer's).
        warmup_iter (int): calls of linear warmup (0: none).
        warmup_start (float): the value at t = 0 when warming up.
        optimizer: default the updater's 'main' optimizer.

    >>> CosineShift('lr', 10, init=1.0).compute(5)
    0.5
    """

    def __init__(self, attr, t_max, min_value=0.0, init=None, warmup_iter=0, warmup_start=0.0,
                 optimizer=None):
        if not 0 <= int(warmup_iter) < int(t_max):
            raise ValueError(f'warmup_iter, t_max: expected 0 <= warmup_iter < t_max, got '
                             f'{warmup_iter} and {t_max}')
        super().__init__(attr, init, optimizer)
        self.t_max = int(t_max)
        self.min_value = min_value
        self.warmup_iter = int(warmup_iter)
        self.warmup_start = warmup_start

    def compute(self, t):
        if t < self.warmup_iter:
            return self.warmup_start + (self.init - self.warmup_start) * t / self.warmup_iter
        s = min(t, self.t_max) - self.warmup_iter
        span = self.t_max - self.warmup_iter
        return self.min_value + (self.init - self.min_value) * (1 + math.cos(math.pi * s / span)) / 2
