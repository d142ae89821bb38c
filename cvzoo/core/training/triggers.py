"""Triggers: decide at each iteration whether an extension (or training) fires."""

__all__ = ['IntervalTrigger', 'get_trigger']


class IntervalTrigger:
    """Fire every ``period`` iterations or epochs.

    Args:
        period (int or float): how often.
        unit (str): ``'iteration'`` or ``'epoch'``.
    """

    def __init__(self, period, unit):
        if unit not in ('iteration', 'epoch'):
            raise ValueError(f"unit: expected 'iteration' or 'epoch', got {unit!r}")
        self.period = period
        self.unit = unit

    def __call__(self, trainer):
        updater = trainer.updater
        if self.unit == 'epoch':
            previous = updater.previous_epoch_detail or 0.0
            return int(updater.epoch_detail // self.period) > int(previous // self.period)
        return updater.iteration > 0 and updater.iteration % self.period == 0

    def get_training_length(self):
        return self.period, self.unit

    def serialize(self, serializer):
        pass


def get_trigger(trigger):
    """Turn ``(period, unit)``, a callable, or None (every iteration) into a trigger."""
    if trigger is None:
        return IntervalTrigger(1, 'iteration')
    if callable(trigger):
        return trigger
    period, unit = trigger
    return IntervalTrigger(period, unit)
