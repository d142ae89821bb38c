import io

import pytest

from cvzoo.utils import progress as progress_module
from cvzoo.utils.progress import ProgressBar, progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_quiet_when_stderr_is_not_a_terminal(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr('sys.stderr', stream)
    assert list(progress(range(5), desc='x')) == [0, 1, 2, 3, 4]
    assert stream.getvalue() == ''


@pytest.mark.parametrize('quiet, expect_output', [(None, True), (False, True), (True, False)],
                         ids=['auto-tty', 'forced-on', 'forced-off'])
def test_shows_on_a_terminal_unless_asked(monkeypatch, quiet, expect_output):
    stream = _Tty()
    monkeypatch.setattr('sys.stderr', stream)
    list(progress(range(4), desc='eval', quiet=quiet))
    text = stream.getvalue()
    assert bool(text) == expect_output
    if expect_output:
        assert 'eval' in text and '4/4' in text and '100%' in text and 'it/s' in text


def test_bar_format_has_rate_and_eta():
    bar = ProgressBar(total=10, desc='d', quiet=True)
    bar.update(5)
    bar._start -= 5.0  # pretend five seconds passed
    line = bar.format()
    assert line.startswith('d:  50%|')
    assert '5/10' in line and '<00:05' in line and '1.0it/s' in line


def test_unknown_total_and_bytes():
    bar = ProgressBar(unit='B', quiet=True)
    bar.update(2_500_000)
    assert '2.5MB' in bar.format()
    assert '%' not in bar.format()


def test_close_is_idempotent(monkeypatch):
    stream = _Tty()
    monkeypatch.setattr('sys.stderr', stream)
    bar = ProgressBar(total=2, quiet=False)
    bar.close()
    bar.close()
    assert stream.getvalue().count('\n') == 1
    assert progress_module._format_time(3725) == '1:02:05'
