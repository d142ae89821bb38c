"""Hyperparameter: named settings that fall back to a parent's when not set here.

Each parameter's UpdateRule has a Hyperparameter whose parent is the optimizer's, so
``optimizer.lr = 0.1`` changes every rule that did not override ``lr``.

>>> parent = Hyperparameter()
>>> parent.lr = 0.1
>>> child = Hyperparameter(parent)
>>> child.lr
0.1

Every number assigned is checked (:func:`check_hyperparameter`), so a schedule that sets
``lr`` to NaN or below zero fails where it sets it, not many updates later.
"""

import math
import numbers

from cvzoo import errors

# Decay factors of running averages: a value above 1 makes them grow without bound.
UNIT_INTERVAL = frozenset({'momentum', 'beta1', 'beta2', 'rho'})


def check_hyperparameter(name, value, unit_interval=UNIT_INTERVAL):
    """Return ``value`` once it is a finite number >= 0 (in [0, 1] for the names in
    ``unit_interval``); booleans and non-numbers (e.g. ``amsgrad``) pass as they are.

    Raises:
        cvzoo.errors.UsageError: naming the hyperparameter, for NaN, inf, a negative value
            or a decay factor above 1.

    >>> check_hyperparameter('lr', float('nan'))
    Traceback (most recent call last):
    ...
    cvzoo.errors.UsageError: lr: expected a finite number >= 0, got nan
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    if name in unit_interval:
        if not (math.isfinite(value) and 0 <= value <= 1):
            raise errors.UsageError(f'{name}: expected a finite number in [0, 1], got {value!r}')
    elif not (math.isfinite(value) and value >= 0):
        raise errors.UsageError(f'{name}: expected a finite number >= 0, got {value!r}')
    return value


class Hyperparameter:
    """A set of named values with an optional parent to inherit from.

    Args:
        parent (Hyperparameter or None): where names not set here are looked up.
        unit_interval (frozenset or None): the names whose values lie in [0, 1] (see
            :func:`check_hyperparameter`); None takes the parent's, or
            :data:`UNIT_INTERVAL`.
    """

    def __init__(self, parent=None, unit_interval=None):
        if unit_interval is None:
            unit_interval = UNIT_INTERVAL if parent is None else parent.unit_interval
        object.__setattr__(self, '_parent', parent)
        object.__setattr__(self, '_unit_interval', frozenset(unit_interval))

    def __setattr__(self, name, value):
        object.__setattr__(self, name, check_hyperparameter(name, value, self._unit_interval))

    def __getattr__(self, name):
        parent = self.__dict__.get('_parent')
        if parent is None or name.startswith('_'):
            raise AttributeError(f'no hyperparameter {name!r}')
        return getattr(parent, name)

    @property
    def unit_interval(self):
        """The names whose values must lie in [0, 1]."""
        return self._unit_interval

    @property
    def parent(self):
        """The Hyperparameter names fall back to, or None."""
        return self._parent

    def get_dict(self):
        """Return every value visible here (own ones override the parent's) as a dict."""
        values = {} if self._parent is None else self._parent.get_dict()
        values.update({k: v for k, v in self.__dict__.items() if not k.startswith('_')})
        return values

    def __repr__(self):
        return f'Hyperparameter({self.get_dict()})'
