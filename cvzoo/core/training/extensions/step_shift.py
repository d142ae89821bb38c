"""StepShift: multiply the value by ``gamma`` every ``step`` calls."""

from cvzoo.core.training.extensions import value_shift


class StepShift(value_shift.ValueShift):
    """``value = init * gamma ** (t // step)`` (Chainer's 'step' policy).

    Args:
        attr (str): the optimizer attribute.
        gamma (float): the factor.
        step (int): calls between two shifts.
        init (float or None): starting value (default: the optimizer's).
        target (float or None): a bound the value never passes.
        optimizer: default the updater's 'main' optimizer.

    >>> StepShift('lr', 0.1, 3, init=1.0).compute(7)
    0.010000000000000002
    """

    def __init__(self, attr, gamma, step, init=None, target=None, optimizer=None):
        if int(step) < 1:
            raise ValueError(f'step: expected a positive int, got {step}')
        super().__init__(attr, init, optimizer)
        self.gamma = gamma
        self.step = int(step)
        self.target = target

    def compute(self, t):
        value = self.init * self.gamma ** (t // self.step)
        if self.target is None:
            return value
        return max(value, self.target) if self.gamma < 1 else min(value, self.target)
