"""PrintReport: print the new entries of LogReport as a table."""

import sys

from cvzoo.core.training import extension


class PrintReport(extension.Extension):
    """Write a row to ``out`` for every new LogReport entry (a header before the first).

    Args:
        entries (sequence of str): the columns: keys of the log entries (``'epoch'``,
            ``'iteration'``, ``'main/loss'``, ...). Missing values leave a blank cell.
        log_report (str): the name of the LogReport extension in the trainer.
        out: a text stream (default ``sys.stdout``, looked up at each write).
    """

    name = 'PrintReport'

    def __init__(self, entries, log_report='LogReport', out=None):
        self._entries = tuple(entries)
        self._log_report = log_report
        self._out = out
        self._widths = [max(10, len(entry)) for entry in self._entries]
        self._printed = 0
        self._header_written = False

    def _stream(self):
        return self._out if self._out is not None else sys.stdout

    def header(self):
        """The header line of the table."""
        return '  '.join(e.ljust(w) for e, w in zip(self._entries, self._widths)) + '\n'

    def row(self, entry):
        """The table line of one log entry."""
        cells = []
        for key, width in zip(self._entries, self._widths):
            value = entry.get(key)
            if value is None:
                cells.append(' ' * width)
            elif isinstance(value, float):
                cells.append(f'{value:<{width}.6g}')
            else:
                cells.append(f'{value!s:<{width}}')
        return '  '.join(cells) + '\n'

    def __call__(self, trainer):
        log = trainer.get_extension(self._log_report).log
        if len(log) <= self._printed:
            return
        out = self._stream()
        if not self._header_written:
            out.write(self.header())
            self._header_written = True
        for entry in log[self._printed:]:
            out.write(self.row(entry))
        self._printed = len(log)
        if hasattr(out, 'flush'):
            out.flush()

    def serialize(self, serializer):
        """Save or load how many entries were printed (a resumed run goes on from there)."""
        self._printed = int(serializer('_printed', self._printed))
