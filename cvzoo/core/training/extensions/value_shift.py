"""ValueShift: the base of the schedules that set an optimizer attribute from a step count."""

from cvzoo.core.training import extension


class ValueShift(extension.Extension):
    """Set ``optimizer.<attr>`` to ``compute(t)``, where ``t`` counts the calls.

    At ``initialize`` the attribute is set to ``compute(t)`` for the current ``t`` (0, or
    the value saved in a snapshot), so the first update already follows the schedule.
    Each call counts ``t`` up by one and sets ``compute(t)``. The default trigger is every
    iteration; pass another one to ``trainer.extend`` to count epochs.

    Subclasses implement ``compute(t)`` and may read ``self.init`` (the attribute's value
    before training when not given).

    Args:
        attr (str): the optimizer attribute (``'lr'``, ``'alpha'``, ``'momentum'`` ...).
        init (float or None): the starting value; None reads it from the optimizer.
        optimizer: the optimizer; None takes the updater's ``'main'`` one.
    """

    trigger = (1, 'iteration')

    def __init__(self, attr, init=None, optimizer=None):
        self.attr = attr
        self.init = init
        self._optimizer = optimizer
        self.t = 0
        self._last_value = None

    def compute(self, t):
        """The value after ``t`` calls."""
        raise NotImplementedError(f'{type(self).__name__} does not implement compute')

    def initialize(self, trainer):
        optimizer = self._get_optimizer(trainer)
        if self.init is None:
            self.init = float(getattr(optimizer, self.attr))
        value = self._last_value if self._last_value is not None else self.compute(self.t)
        self._set(optimizer, value)

    def __call__(self, trainer):
        self.t += 1
        self._set(self._get_optimizer(trainer), self.compute(self.t))

    def _get_optimizer(self, trainer):
        return self._optimizer or trainer.updater.get_optimizer('main')

    def _set(self, optimizer, value):
        setattr(optimizer, self.attr, value)
        self._last_value = value

    def serialize(self, serializer):
        """Save or load the count, the starting value and the last value set."""
        self.t = int(serializer('t', self.t))
        self.init = _optional_float(serializer('init', self.init))
        self._last_value = _optional_float(serializer('_last_value', self._last_value))


def _optional_float(value):
    return None if value is None else float(value)
