"""Fixtures of the fault tables: a check that a case wrote nothing outside its tmp_path."""

import os
import pathlib

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
REPO = TESTS.parent
# Written by the test runner itself, not by the code under test.
_SKIPPED_DIRS = {'.git', '__pycache__', '.pytest_cache', '.benchmarks'}


def _listing(root):
    """{path: (size, mtime_ns)} of every file below ``root`` (empty when it is absent)."""
    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS]
        for name in names:
            path = os.path.join(folder, name)
            try:
                stat = os.lstat(path)
            except FileNotFoundError:
                continue
            files[path] = (stat.st_size, stat.st_mtime_ns)
    return files


def _watched_roots():
    roots = [REPO, pathlib.Path(os.environ['CVZOO_HOME']),
             pathlib.Path('~/.cache/cvzoo').expanduser(), pathlib.Path.cwd()]
    unique = []
    for root in roots:
        if root.resolve() not in [r.resolve() for r in unique]:
            unique.append(root)
    return unique


@pytest.fixture(autouse=True)
def nothing_changes_outside_tmp(_private_cvzoo_home, tmp_path):
    """Fail a case that created, changed or removed a file outside its tmp_path: in the
    repository, in the $CVZOO_HOME it was given, in ~/.cache/cvzoo or in the working
    folder. (A case that needs a $CVZOO_HOME of its own points it into tmp_path.)"""
    roots = _watched_roots()
    before = {root: _listing(root) for root in roots}
    yield
    tmp = str(tmp_path.resolve())
    changed = []
    for root in roots:
        after = _listing(root)
        for path in sorted(set(before[root]) | set(after)):
            if os.path.realpath(path).startswith(tmp + os.sep):
                continue
            if before[root].get(path) != after.get(path):
                state = ('new' if path not in before[root] else
                         'removed' if path not in after else 'changed')
                changed.append(f'{state}: {path}')
    assert not changed, 'files outside tmp_path changed:\n' + '\n'.join(changed)
