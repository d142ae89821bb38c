"""ExponentialShift: multiply the value by ``rate`` at every call."""

from cvzoo.core.training.extensions import value_shift


class ExponentialShift(value_shift.ValueShift):
    """``value = init * rate ** t``, stopped at ``target`` when given.

    Args:
        attr (str): the optimizer attribute.
        rate (float): the factor per call.
        init (float or None): starting value (default: the optimizer's).
        target (float or None): a bound the value never passes.
        optimizer: default the updater's 'main' optimizer.

    >>> ExponentialShift('lr', 0.5, init=1.0, target=0.2).compute(3)
    0.2
    """

    def __init__(self, attr, rate, init=None, target=None, optimizer=None):
        if rate <= 0:
            raise ValueError(f'rate: expected a positive number, got {rate}')
        super().__init__(attr, init, optimizer)
        self.rate = rate
        self.target = target

    def compute(self, t):
        value = self.init * self.rate ** t
        if self.target is None:
            return value
        return max(value, self.target) if self.rate < 1 else min(value, self.target)
