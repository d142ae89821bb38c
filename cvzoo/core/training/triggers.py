"""Triggers: decide at each iteration whether an extension (or training) fires.

Chainer's names: ``IntervalTrigger``, ``ManualScheduleTrigger`` and the best-value
triggers ``MaxValueTrigger`` / ``MinValueTrigger`` (e.g. to snapshot the best model).
"""

import operator

from cvzoo import errors
from cvzoo.core.training import json_state
from cvzoo.core.training import reporter as reporter_module

__all__ = ['BestValueTrigger', 'IntervalTrigger', 'ManualScheduleTrigger', 'MaxValueTrigger',
           'MinValueTrigger', 'get_trigger']


def _check_unit(unit):
    if unit not in ('iteration', 'epoch'):
        raise errors.UsageError(f"unit: expected 'iteration' or 'epoch', got {unit!r}")


class IntervalTrigger:
    """Fire every ``period`` iterations or epochs.

    Args:
        period (int or float): how often.
        unit (str): ``'iteration'`` or ``'epoch'``.
    """

    def __init__(self, period, unit):
        _check_unit(unit)
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


class ManualScheduleTrigger:
    """Fire at the given iterations or epochs (Chainer's, e.g. to drop the learning rate).

    Args:
        points (int or float, or a list of them): when to fire.
        unit (str): ``'iteration'`` or ``'epoch'``.

    >>> trigger = ManualScheduleTrigger([30, 60], 'epoch')
    >>> trigger.get_training_length()
    (60, 'epoch')
    """

    def __init__(self, points, unit):
        _check_unit(unit)
        points = sorted(points) if isinstance(points, (list, tuple)) else [points]
        if not points:
            raise errors.UsageError('points: expected at least one iteration or epoch, got none')
        self.points = points
        self.unit = unit

    def __call__(self, trainer):
        updater = trainer.updater
        if self.unit == 'epoch':
            previous = updater.previous_epoch_detail or 0.0
            return any(previous < point <= updater.epoch_detail for point in self.points)
        return updater.iteration in self.points

    def get_training_length(self):
        return self.points[-1], self.unit

    def serialize(self, serializer):
        pass


class BestValueTrigger:
    """Fire when the mean of ``key`` over the last period is the best seen so far.

    At each firing of ``trigger``, the mean of the observations of ``key`` since the last
    one is compared with the best so far: the trigger fires when ``compare(best, mean)``
    is True (or on the first mean). The best value and the running mean are saved in
    snapshots, so a resumed run keeps comparing with the same best.

    Args:
        key (str): the observation, e.g. ``'validation/main/accuracy'``.
        compare: ``compare(best, new)`` True when ``new`` is better.
        trigger: when to compare, ``(period, unit)`` (default every epoch).

    Attributes:
        best_value (float or None): the best mean so far.
    """

    def __init__(self, key, compare, trigger=(1, 'epoch')):
        self.key = key
        self.compare = compare
        self.best_value = None
        self._interval = get_trigger(trigger)
        self._summary = reporter_module.DictSummary()

    def __call__(self, trainer):
        if self.key in trainer.observation:
            self._summary.add({self.key: trainer.observation[self.key]})
        if not self._interval(trainer):
            return False
        means = self._summary.compute_mean()
        self._summary = reporter_module.DictSummary()
        if self.key not in means:
            return False
        if self.best_value is not None and not self.compare(self.best_value, means[self.key]):
            return False
        self.best_value = means[self.key]
        return True

    def serialize(self, serializer):
        """Save or load the best value and the running mean."""
        self._summary.serialize(serializer['summary'])
        self.best_value = json_state.serialize_json(serializer, 'best_value', self.best_value)


class MaxValueTrigger(BestValueTrigger):
    """Fire when the mean of ``key`` reaches a new maximum (see :class:`BestValueTrigger`).

    >>> trigger = MaxValueTrigger('validation/main/accuracy', trigger=(1, 'epoch'))
    >>> trigger.best_value is None
    True
    """

    def __init__(self, key, trigger=(1, 'epoch')):
        super().__init__(key, operator.lt, trigger)


class MinValueTrigger(BestValueTrigger):
    """Fire when the mean of ``key`` reaches a new minimum (see :class:`BestValueTrigger`).

    >>> trigger = MinValueTrigger('validation/main/loss')
    >>> trigger.key
    'validation/main/loss'
    """

    def __init__(self, key, trigger=(1, 'epoch')):
        super().__init__(key, operator.gt, trigger)


def get_trigger(trigger):
    """Turn ``(period, unit)``, a callable, or None (every iteration) into a trigger."""
    if trigger is None:
        return IntervalTrigger(1, 'iteration')
    if callable(trigger):
        return trigger
    period, unit = trigger
    return IntervalTrigger(period, unit)
