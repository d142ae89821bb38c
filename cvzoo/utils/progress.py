"""A small progress bar on stderr, used wherever long work happens.

It is quiet by default when stderr is not a terminal (logs and CI stay clean) and
whenever ``quiet=True``; when it shows, it redraws one line at most ten times a second
with the count, the rate and the time left.
"""

import sys
import time
from typing import Iterable, Iterator, Optional

_BAR_WIDTH = 24
_MIN_INTERVAL = 0.1  # seconds between redraws


def _is_quiet(quiet: Optional[bool], stream) -> bool:
    if quiet is not None:
        return bool(quiet)
    isatty = getattr(stream, 'isatty', None)
    try:
        return not (isatty is not None and isatty())
    except ValueError:  # closed stream
        return True


def _format_time(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f'{hours:d}:{minutes:02d}:{seconds:02d}'
    return f'{minutes:02d}:{seconds:02d}'


def _format_count(n: float, unit: str) -> str:
    if unit != 'B':
        return f'{n:g}' if isinstance(n, float) else str(n)
    for prefix in ('', 'k', 'M', 'G', 'T'):
        if abs(n) < 1000 or prefix == 'T':
            return f'{n:.1f}{prefix}B' if prefix else f'{int(n)}B'
        n /= 1000.0
    return f'{n}B'


class ProgressBar:
    """Count work done and show it on one line of stderr.

    Args:
        total (int or None): the expected count; None draws no bar and no time left.
        desc (str or None): a label printed before the bar.
        quiet (bool or None): True: show nothing; False: always show; None (default):
            show only when stderr is a terminal.
        unit (str): the unit of the count, ``'it'`` by default; ``'B'`` shows kB/MB/GB.

    >>> with ProgressBar(total=3, quiet=True) as bar:
    ...     bar.update(3)
    >>> bar.n
    3
    """

    def __init__(self, total: Optional[int] = None, desc: Optional[str] = None,
                 quiet: Optional[bool] = None, unit: str = 'it'):
        self.total = total
        self.desc = desc
        self.unit = unit
        self.n = 0
        self._stream = sys.stderr
        self.quiet = _is_quiet(quiet, self._stream)
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._closed = False
        self._last_width = 0

    def update(self, n: int = 1) -> None:
        """Add ``n`` to the count and redraw if the last redraw is old enough."""
        self.n += n
        if self.quiet:
            return
        now = time.monotonic()
        if now - self._last_draw >= _MIN_INTERVAL or (self.total and self.n >= self.total):
            self._last_draw = now
            self._draw(now)

    def close(self) -> None:
        """Draw the final state and end the line (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if not self.quiet:
            self._draw(time.monotonic())
            self._stream.write('\n')
            self._stream.flush()

    def format(self, now: Optional[float] = None) -> str:
        """Return the status line, e.g. ``'eval:  50%|####    | 5/10 [00:01<00:01, 4.9it/s]'``."""
        now = time.monotonic() if now is None else now
        elapsed = max(now - self._start, 1e-9)
        rate = self.n / elapsed
        head = f'{self.desc}: ' if self.desc else ''
        count = _format_count(self.n, self.unit)
        rate_text = f'{_format_count(rate, self.unit) if self.unit == "B" else f"{rate:.1f}"}'
        rate_text += '/s' if self.unit == 'B' else f'{self.unit}/s'
        if not self.total:
            return f'{head}{count} [{_format_time(elapsed)}, {rate_text}]'
        fraction = min(self.n / self.total, 1.0)
        filled = int(round(fraction * _BAR_WIDTH))
        bar = '#' * filled + ' ' * (_BAR_WIDTH - filled)
        eta = (self.total - self.n) / rate if rate > 0 else 0.0
        total = _format_count(self.total, self.unit)
        return (f'{head}{fraction * 100:3.0f}%|{bar}| {count}/{total} '
                f'[{_format_time(elapsed)}<{_format_time(eta)}, {rate_text}]')

    def _draw(self, now: float) -> None:
        line = self.format(now)
        padding = ' ' * max(self._last_width - len(line), 0)
        self._last_width = len(line)
        self._stream.write('\r' + line + padding)
        self._stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


def progress(iterable: Iterable, total: Optional[int] = None, desc: Optional[str] = None,
             quiet: Optional[bool] = None) -> Iterator:
    """Yield the items of ``iterable`` while showing a ProgressBar.

    Args:
        iterable: anything iterable.
        total (int or None): the expected count; taken from ``len(iterable)`` when None
            and the iterable has a length.
        desc (str or None): a label before the bar.
        quiet (bool or None): as in ProgressBar (None: show only on a terminal).

    >>> list(progress(range(3), quiet=True))
    [0, 1, 2]
    """
    if total is None:
        try:
            total = len(iterable)
        except TypeError:
            total = None
    with ProgressBar(total=total, desc=desc, quiet=quiet) as bar:
        for item in iterable:
            yield item
            bar.update(1)
