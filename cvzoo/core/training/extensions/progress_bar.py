"""ProgressBar: show training progress, speed and the estimated time left on stderr."""

import sys
import time

from cvzoo.core.training import extension


def _format_seconds(seconds):
    seconds = int(max(seconds, 0))
    hours, rest = divmod(seconds, 3600)
    return f'{hours}:{rest // 60:02d}:{rest % 60:02d}'


class ProgressBar(extension.Extension):
    """Every ``update_interval`` iterations, redraw a status line with the ETA.

    Args:
        training_length ((int, str) or None): ``(length, 'iteration' | 'epoch')``; None
            takes it from the trainer's stop trigger (``get_training_length()``).
        update_interval (int): iterations between redraws.
        bar_length (int): characters of the bar.
        out: a text stream (default ``sys.stderr``, looked up at each write).
    """

    name = 'ProgressBar'
    trigger = (1, 'iteration')

    def __init__(self, training_length=None, update_interval=100, bar_length=40, out=None):
        if int(update_interval) < 1:
            raise ValueError(f'update_interval: expected a positive int, got {update_interval}')
        self._training_length = training_length
        self._update_interval = int(update_interval)
        self._bar_length = bar_length
        self._out = out
        self._recent = []  # (time, iteration) of the last redraws, for the speed

    def initialize(self, trainer):
        if self._training_length is None:
            get_length = getattr(trainer.stop_trigger, 'get_training_length', None)
            if get_length is None:
                raise ValueError('training_length: the stop trigger does not tell the '
                                 'training length; pass training_length=(length, unit)')
            self._training_length = get_length()

    def __call__(self, trainer):
        iteration = trainer.updater.iteration
        if iteration % self._update_interval == 0:
            self._stream().write(self.status(trainer) + '\r')

    def _stream(self):
        return self._out if self._out is not None else sys.stderr

    def status(self, trainer):
        """The status line: bar, percentage, iterations, speed and time left."""
        length, unit = self._training_length
        updater = trainer.updater
        done = updater.iteration if unit == 'iteration' else updater.epoch_detail
        fraction = min(done / length, 1.0)
        filled = int(fraction * self._bar_length)
        bar = '#' * filled + '.' * (self._bar_length - filled)
        now = time.time()
        self._recent = (self._recent + [(now, updater.iteration)])[-10:]
        (t0, i0), (t1, i1) = self._recent[0], self._recent[-1]
        speed = (i1 - i0) / (t1 - t0) if t1 > t0 else 0.0
        line = (f'[{bar}] {fraction * 100:6.2f}% iter {updater.iteration} '
                f'epoch {updater.epoch} {speed:.3g} iters/sec')
        if speed > 0 and fraction > 0:
            remaining_iters = (1.0 - fraction) * updater.iteration / fraction
            line += f' ETA {_format_seconds(remaining_iters / speed)}'
        return line

    def finalize(self):
        out = self._stream()
        out.write('\n')
        if hasattr(out, 'flush'):
            out.flush()
