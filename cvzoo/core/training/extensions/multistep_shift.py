"""MultistepShift: multiply the value by ``gamma`` at each listed step, optionally after a
linear warm-up."""

import bisect

from cvzoo.core.training.extensions import value_shift


class MultistepShift(value_shift.ValueShift):
    """``value = init * gamma ** (number of step_value entries <= t)``, times a linear
    warm-up factor over the first ``warmup_iter`` calls.

    The warm-up factor rises from ``warmup_start_ratio`` at t = 0 to 1 at
    ``warmup_iter`` (Goyal et al. 2017, section 2.2): the schedule of Detectron's
    ``WarmupMultiStepLR``, of torchvision's detection references and of ChainerCV's FPN
    and Mask R-CNN training (500 iterations from 1/3 of the rate). A warm-up and the
    steps set one attribute, so they are one schedule; two extensions would overwrite
    each other.

    Args:
        attr (str): the optimizer attribute.
        gamma (float): the factor.
        step_value (sequence of int): the calls at which the value shifts, increasing.
        init (float or None): starting value (default: the optimizer's).
        optimizer: default the updater's 'main' optimizer.
        warmup_iter (int): calls of the warm-up (0: none).
        warmup_start_ratio (float): the warm-up factor at t = 0, in [0, 1].

    >>> MultistepShift('lr', 0.1, [2, 5], init=1.0).compute(5)
    0.010000000000000002
    >>> shift = MultistepShift('lr', 0.1, [4], init=0.3, warmup_iter=3,
    ...                        warmup_start_ratio=1 / 3)
    >>> [round(shift.compute(t), 4) for t in range(5)]
    [0.1, 0.1667, 0.2333, 0.3, 0.03]
    """

    def __init__(self, attr, gamma, step_value, init=None, optimizer=None, *,
                 warmup_iter=0, warmup_start_ratio=1 / 3):
        step_value = [int(s) for s in step_value]
        if step_value != sorted(step_value):
            raise ValueError(f'step_value: expected increasing steps, got {step_value}')
        if int(warmup_iter) != warmup_iter or warmup_iter < 0:
            raise ValueError(f'warmup_iter: expected an int >= 0, got {warmup_iter!r}')
        if not 0 <= warmup_start_ratio <= 1:
            raise ValueError(
                f'warmup_start_ratio: expected a value in [0, 1], got {warmup_start_ratio!r}')
        super().__init__(attr, init, optimizer)
        self.gamma = gamma
        self.step_value = step_value
        self.warmup_iter = int(warmup_iter)
        self.warmup_start_ratio = warmup_start_ratio

    def compute(self, t):
        value = self.init * self.gamma ** bisect.bisect_right(self.step_value, t)
        if t < self.warmup_iter:
            ratio = self.warmup_start_ratio
            value *= ratio + (1 - ratio) * t / self.warmup_iter
        return value
