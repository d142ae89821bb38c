"""LogReport: average the observations over a period and append them to a JSON-lines log."""

import json
import os

from cvzoo.core.serializers import atomic_write
from cvzoo.core.training import extension, json_state, reporter, triggers


class LogReport(extension.Extension):
    """Keep the mean of each reported scalar over every ``trigger`` period and log it.

    Each time the trigger fires, one entry ``{'epoch', 'iteration', 'elapsed_time',
    <key>: mean, ...}`` is added to :attr:`log` and the whole log is written to
    ``<trainer.out>/<filename>`` as JSON lines (one object per line). The file is written
    under a temporary name and renamed, so a reader never sees a half-written line.

    Args:
        keys (sequence of str or None): the observation keys to log (default: all).
        trigger: ``(period, unit)`` or a trigger callable; when an entry is made.
        filename (str or None): the log file in ``trainer.out``; None writes no file.

    Attributes:
        log (list of dict): the entries so far (kept in snapshots).
    """

    name = 'LogReport'

    def __init__(self, keys=None, trigger=(1, 'epoch'), filename='log'):
        self._keys = None if keys is None else tuple(keys)
        self._trigger = triggers.get_trigger(trigger)
        self._filename = filename
        self._summary = reporter.DictSummary()
        self.log = []

    def __call__(self, trainer):
        observation = trainer.observation
        if self._keys is not None:
            observation = {k: v for k, v in observation.items() if k in self._keys}
        self._summary.add(observation)
        if not self._trigger(trainer):
            return
        updater = trainer.updater
        entry = {'epoch': updater.epoch, 'iteration': updater.iteration,
                 'elapsed_time': trainer.elapsed_time}
        entry.update(self._summary.compute_mean())
        self.log.append(entry)
        self._summary = reporter.DictSummary()
        if self._filename is not None:
            self._write(os.path.join(trainer.out, self._filename))

    def _write(self, path):
        text = ''.join(json.dumps(entry, sort_keys=True) + '\n' for entry in self.log)
        with atomic_write.atomic_write(path) as tmp_path, open(tmp_path, 'w') as handle:
            handle.write(text)

    def serialize(self, serializer):
        """Save or load the log, the running summary and the trigger's state."""
        if hasattr(self._trigger, 'serialize'):
            self._trigger.serialize(serializer['_trigger'])
        self._summary.serialize(serializer['_summary'])
        self.log = json_state.serialize_json(serializer, '_log', self.log)


def read_log(path):
    """Read a JSON-lines log written by LogReport; return a list of dicts."""
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]
