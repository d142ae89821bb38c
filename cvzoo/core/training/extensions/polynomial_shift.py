"""PolynomialShift: the 'poly' schedule of semantic segmentation, with an optional warm-up."""

from cvzoo.core.training.extensions import value_shift


class PolynomialShift(value_shift.ValueShift):
    """``value = init * (1 - t / t_max) ** power``, times a linear warm-up factor over the
    first ``warmup_iter`` calls; 0 from ``t_max`` on.

    The schedule of DeepLab (Chen et al. 2017, "poly" with power 0.9), of ChainerCV's
    PSPNet training (``PolynomialShift``) and of torchvision's segmentation reference
    (``PolynomialLR(power=0.9)``). The warm-up factor rises from ``warmup_start_ratio``
    at t = 0 to 1 at ``warmup_iter``, as :class:`MultistepShift`'s does.

    Args:
        attr (str): the optimizer attribute.
        power (float): the exponent, > 0.
        t_max (int): the call count at which the value reaches 0.
        init (float or None): starting value (default: the optimizer's).
        optimizer: default the updater's 'main' optimizer.
        warmup_iter (int): calls of the warm-up (0: none), below ``t_max``.
        warmup_start_ratio (float): the warm-up factor at t = 0, in [0, 1].

    >>> shift = PolynomialShift('lr', 0.9, 10, init=1.0)
    >>> [round(shift.compute(t), 4) for t in (0, 5, 10, 12)]
    [1.0, 0.5359, 0.0, 0.0]
    """

    def __init__(self, attr, power, t_max, init=None, optimizer=None, *, warmup_iter=0,
                 warmup_start_ratio=1 / 3):
        if not power > 0:
            raise ValueError(f'power: expected a number > 0, got {power!r}')
        if int(t_max) != t_max or t_max < 1:
            raise ValueError(f't_max: expected an int >= 1, got {t_max!r}')
        if int(warmup_iter) != warmup_iter or not 0 <= warmup_iter < t_max:
            raise ValueError(f'warmup_iter: expected an int in [0, t_max={t_max}), got '
                             f'{warmup_iter!r}')
        if not 0 <= warmup_start_ratio <= 1:
            raise ValueError(
                f'warmup_start_ratio: expected a value in [0, 1], got {warmup_start_ratio!r}')
        super().__init__(attr, init, optimizer)
        self.power = power
        self.t_max = int(t_max)
        self.warmup_iter = int(warmup_iter)
        self.warmup_start_ratio = warmup_start_ratio

    def compute(self, t):
        value = self.init * (1 - min(t, self.t_max) / self.t_max) ** self.power
        if t < self.warmup_iter:
            ratio = self.warmup_start_ratio
            value *= ratio + (1 - ratio) * t / self.warmup_iter
        return value
