"""Reporter: collects scalar observations (losses, accuracies) during training.

Code anywhere in a training step calls ``report({'loss': loss}, observer)``; the value
is stored under the observer's registered name (``main/loss``). Values stay on their
device until a summary is computed, so reporting never synchronises a GPU.

>>> reporter = Reporter()
>>> observation = {}
>>> with reporter.scope(observation):
...     report({'loss': 1.5})
>>> observation
{'loss': 1.5}
"""

import contextlib
import threading

import numpy

from cvzoo.core import backend
from cvzoo.core import variable as variable_module
from cvzoo.core.training import json_state

_local = threading.local()


def _stack():
    if not hasattr(_local, 'reporters'):
        _local.reporters = []
    return _local.reporters


class Reporter:
    """Holds observer names and the observation dict being filled."""

    def __init__(self):
        self._observer_names = {}
        self.observation = {}

    def add_observer(self, name, observer):
        """Register ``observer`` (usually a Link) under ``name``."""
        self._observer_names[id(observer)] = name

    def add_observers(self, prefix, observers):
        """Register (name, observer) pairs under ``prefix + name``."""
        for name, observer in observers:
            self._observer_names[id(observer)] = prefix + name

    @contextlib.contextmanager
    def scope(self, observation):
        """Make this reporter current and write reported values into ``observation``."""
        old = self.observation
        self.observation = observation
        _stack().append(self)
        try:
            yield
        finally:
            _stack().pop()
            self.observation = old

    def report(self, values, observer=None):
        """Store ``values`` (name -> scalar, array or Variable) in the current observation."""
        prefix = ''
        if observer is not None:
            name = self._observer_names.get(id(observer))
            if name is None:
                raise KeyError('report: the observer is not registered with this reporter')
            prefix = name + '/'
        for key, value in values.items():
            if isinstance(value, variable_module.Variable):
                value = value.array
            self.observation[prefix + key] = value


def report(values, observer=None):
    """Report ``values`` to the current reporter; a no-op when no reporter is in scope."""
    if _stack():
        _stack()[-1].report(values, observer)


class Summary:
    """Running mean and standard deviation of one scalar; accumulates on the device."""

    def __init__(self):
        self._x = 0.0
        self._x2 = 0.0
        self._n = 0

    def add(self, value, weight=1):
        """Add a scalar (a Python number or a 0-d array on any device)."""
        value = getattr(value, 'array', value)
        with backend.using_device_of(value):
            self._x = self._x + weight * value
            self._x2 = self._x2 + weight * value * value
        self._n += weight

    def compute_mean(self):
        """The mean, as a Python float (this is where a GPU value is copied to the host)."""
        return float(backend.to_numpy(self._x)) / self._n

    def make_statistics(self):
        """(mean, std) as Python floats."""
        mean = self.compute_mean()
        var = float(backend.to_numpy(self._x2)) / self._n - mean * mean
        return mean, float(numpy.sqrt(max(var, 0.0)))

    def serialize(self, serializer):
        self._x = float(serializer('_x', float(backend.to_numpy(self._x))))
        self._x2 = float(serializer('_x2', float(backend.to_numpy(self._x2))))
        self._n = int(serializer('_n', self._n))


class DictSummary:
    """Summaries of every scalar key of a series of observation dicts."""

    def __init__(self):
        self._summaries = {}

    def add(self, observation):
        """Add every scalar value of ``observation`` (non-scalars are skipped)."""
        for key, value in observation.items():
            if numpy.isscalar(value) or getattr(value, 'ndim', None) == 0:
                self._summaries.setdefault(key, Summary()).add(value)

    def compute_mean(self):
        """{key: mean} as Python floats."""
        return {key: s.compute_mean() for key, s in self._summaries.items()}

    def make_statistics(self):
        """{key: mean, key + '.std': std}."""
        stats = {}
        for key, summary in self._summaries.items():
            stats[key], stats[key + '.std'] = summary.make_statistics()
        return stats

    def serialize(self, serializer):
        """Save or load every summary as one JSON key (the set of keys varies)."""
        state = {key: [float(backend.to_numpy(s._x)), float(backend.to_numpy(s._x2)), s._n]
                 for key, s in self._summaries.items()}
        state = json_state.serialize_json(serializer, '_summaries', state)
        self._summaries = {}
        for key, (x, x2, n) in state.items():
            summary = self._summaries[key] = Summary()
            summary._x, summary._x2, summary._n = x, x2, n
