"""MultistepShift: multiply the value by ``gamma`` at each listed step."""

import bisect

from cvzoo.core.training.extensions import value_shift


class MultistepShift(value_shift.ValueShift):
    """``value = init * gamma ** (number of step_value entries <= t)``.

    Args:
        attr (str): the optimizer attribute.
        gamma (float): the factor.
        step_value (sequence of int): the calls at which the value shifts, increasing.
        init (float or None): starting value (default: the optimizer's).
        optimizer: default the updater's 'main' optimizer.

    >>> MultistepShift('lr', 0.1, [2, 5], init=1.0).compute(5)
    0.010000000000000002
    """

    def __init__(self, attr, gamma, step_value, init=None, optimizer=None):
        step_value = [int(s) for s in step_value]
        if step_value != sorted(step_value):
            raise ValueError(f'step_value: expected increasing steps, got {step_value}')
        super().__init__(attr, init, optimizer)
        self.gamma = gamma
        self.step_value = step_value

    def compute(self, t):
        return self.init * self.gamma ** bisect.bisect_right(self.step_value, t)
