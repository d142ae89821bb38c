"""tools/fault_sweep.py classes how a case ends: it tells a one-line error, a traceback
and a quiet answer apart (checked on cases whose ending is known)."""

import subprocess
import sys

from tests.helpers.scripts import load_tool


def _outcome(sweep, tmp_path, argv):
    return sweep.run(lambda tmp: (argv, {}), tmp_path)[0]


def test_the_sweep_tells_the_endings_apart(tmp_path):
    sweep = load_tool('fault_sweep')
    assert _outcome(sweep, tmp_path, sweep.api('raise errors.UsageError("x: bad")')) == 'error'
    assert _outcome(sweep, tmp_path, sweep.api('raise KeyError("bug")')) == 'TRACEBACK'
    assert _outcome(sweep, tmp_path, sweep.api('pass')) == 'answer'
    assert _outcome(sweep, tmp_path, [sys.executable, '-c', 'bytearray(8 << 30)']) == \
        'EXHAUSTED'


def test_the_sweep_runs_a_case_and_prints_its_table():
    done = subprocess.run([sys.executable, 'tools/fault_sweep.py', '--case', 'score_thresh_nan'],
                          cwd=load_tool('fault_sweep').ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert '| non-finite | 1 | 1 | 0 | 0 | 0 | 0 | 0 |' in done.stdout
