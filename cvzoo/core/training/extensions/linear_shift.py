"""LinearShift: move the value linearly between two points (e.g. a warmup)."""

from cvzoo.core.training.extensions import value_shift


class LinearShift(value_shift.ValueShift):
    """``value`` goes from ``value_range[0]`` at ``t <= time_range[0]`` to
    ``value_range[1]`` at ``t >= time_range[1]``, linearly in between.

    Args:
        attr (str): the optimizer attribute.
        value_range ((float, float)): start and end values.
        time_range ((int, int)): start and end call counts.
        optimizer: default the updater's 'main' optimizer.

    >>> LinearShift('lr', (0.0, 1.0), (0, 4)).compute(1)
    0.25
    """

    def __init__(self, attr, value_range, time_range, optimizer=None):
        t1, t2 = time_range
        if t2 <= t1:
            raise ValueError(f'time_range: expected (start, end) with start < end, got {time_range}')
        super().__init__(attr, value_range[0], optimizer)
        self.value_range = tuple(value_range)
        self.time_range = (t1, t2)

    def compute(self, t):
        (v1, v2), (t1, t2) = self.value_range, self.time_range
        if t <= t1:
            return v1
        if t >= t2:
            return v2
        return v1 + (v2 - v1) * (t - t1) / (t2 - t1)
