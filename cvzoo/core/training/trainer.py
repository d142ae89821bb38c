"""Trainer: the training loop that runs an updater and its extensions."""

import os
import time

import numpy

from cvzoo.core.serializers import serializer as serializer_module
from cvzoo.core.training import extension as extension_module
from cvzoo.core.training import reporter as reporter_module
from cvzoo.core.training import triggers


class _ExtensionEntry:
    def __init__(self, extension, name, trigger, priority):
        self.extension = extension
        self.name = name
        self.trigger = triggers.get_trigger(trigger)
        self.priority = priority


class Trainer:
    """Run ``updater.update()`` until ``stop_trigger`` fires, calling extensions between.

    Args:
        updater: a StandardUpdater (or anything with update(), iteration, epoch_detail,
            serialize()).
        stop_trigger: ``(length, 'iteration' | 'epoch')`` or a trigger callable.
        out (str): folder for logs, plots and snapshots (created on demand).
        extensions (list): extensions to add with their defaults.

    Attributes:
        observation (dict): what was reported during the current iteration.
        reporter: the Reporter with the optimizers' targets registered as ``main`` etc.
        elapsed_time (float): seconds of training so far (kept across resume).
    """

    def __init__(self, updater, stop_trigger=None, out='result', extensions=None):
        self.updater = updater
        self.stop_trigger = triggers.get_trigger(stop_trigger or (1, 'epoch'))
        self.out = out
        self.observation = {}
        self.reporter = reporter_module.Reporter()
        for name, optimizer in updater.get_all_optimizers().items():
            self.reporter.add_observer(name, optimizer.target)
            self.reporter.add_observers(name, optimizer.target.namedlinks(skipself=True))
        self._extensions = {}
        self._start_time = None
        self._elapsed_before = 0.0
        self._done = False
        updater.connect_trainer(self)
        for ext in extensions or ():
            self.extend(ext)

    @property
    def elapsed_time(self):
        if self._start_time is None:
            return self._elapsed_before
        return self._elapsed_before + time.time() - self._start_time

    def extend(self, extension, name=None, trigger=None, priority=None):
        """Add an extension; name, trigger and priority default to the extension's own."""
        name = name or getattr(extension, 'default_name', None) or type(extension).__name__
        base, n = name, 1
        while name in self._extensions:
            n += 1
            name = f'{base}_{n}'
        trigger = trigger if trigger is not None else getattr(extension, 'trigger', None)
        if priority is None:
            priority = getattr(extension, 'priority', extension_module.PRIORITY_READER)
        self._extensions[name] = _ExtensionEntry(extension, name, trigger, priority)

    @property
    def extensions(self):
        """The extensions added, {name: extension}, in the order they run."""
        return {entry.name: entry.extension for entry in self._ordered()}

    def get_extension(self, name):
        """Return the extension added under ``name``."""
        if name not in self._extensions:
            raise ValueError(f'get_extension: no extension {name!r}; have {sorted(self._extensions)}')
        return self._extensions[name].extension

    def _ordered(self):
        return sorted(self._extensions.values(), key=lambda e: -e.priority)

    def run(self):
        """Train until the stop trigger fires; extensions are finalized even on error."""
        if self._done:
            raise RuntimeError('Trainer.run: this trainer has already finished')
        os.makedirs(self.out, exist_ok=True)
        entries = self._ordered()
        # NOTE: snapshots with autoload initialize first, so the others see loaded state.
        for entry in sorted(entries, key=lambda e: not getattr(e.extension, 'autoload', False)):
            initialize = getattr(entry.extension, 'initialize', None)
            if initialize is not None:
                initialize(self)
        self._start_time = time.time()
        try:
            while not self.stop_trigger(self):
                self.observation = {}
                with self.reporter.scope(self.observation):
                    self.updater.update()
                    for entry in entries:
                        if entry.trigger(self):
                            entry.extension(self)
        finally:
            self._elapsed_before = self.elapsed_time
            self._start_time = None
            for entry in entries:
                finalize = getattr(entry.extension, 'finalize', None)
                if finalize is not None:
                    finalize()
            self.updater.finalize()
        self._done = True

    def serialize(self, serializer):
        """Save or load the updater, the extensions' state and the elapsed time."""
        self.updater.serialize(serializer['updater'])
        extensions = serializer['extensions']
        for name, entry in self._extensions.items():
            if hasattr(entry.extension, 'serialize'):
                entry.extension.serialize(extensions[name])
            if hasattr(entry.trigger, 'serialize'):
                entry.trigger.serialize(extensions[name + '/trigger'])
        elapsed = float(serializer('elapsed_time', self.elapsed_time))
        if isinstance(serializer, serializer_module.Deserializer):
            # NOTE: only loading sets the clock; saving during run() must not add the time
            # so far onto itself (it did: every snapshot doubled elapsed_time).
            self._elapsed_before = elapsed
            if self._start_time is not None:
                self._start_time = time.time()
        _serialize_global_rng(serializer['numpy_random'])


def _serialize_global_rng(serializer):
    """Save or load NumPy's global RandomState (dropout draws its masks from it).

    NOTE: a GPU run draws from the GPU module's own generator, which is not saved, so a
    resumed GPU run with dropout is not bit-for-bit equal to an uninterrupted one.
    """
    serialize_random_state(serializer, numpy.random)


def serialize_random_state(serializer, rng):
    """Save or load the state of ``rng``: a ``numpy.random.RandomState`` (a transform's
    own generator) or the ``numpy.random`` module (the global one)."""
    name, keys, pos, has_gauss, cached = rng.get_state()
    keys = numpy.asarray(serializer('keys', keys))
    pos = int(serializer('pos', pos))
    has_gauss = int(serializer('has_gauss', has_gauss))
    cached = float(serializer('cached_gaussian', cached))
    rng.set_state((name, keys, pos, has_gauss, cached))
