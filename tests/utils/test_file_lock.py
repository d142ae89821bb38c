import multiprocessing
import time

import pytest

from cvzoo.utils.file_lock import FileLock


def _hold(path, seconds, started):
    with FileLock(path):
        started.set()
        time.sleep(seconds)


def test_second_locker_waits(tmp_path):
    path = tmp_path / 'x.lock'
    started = multiprocessing.Event()
    process = multiprocessing.Process(target=_hold, args=(path, 1.0, started))
    process.start()
    try:
        assert started.wait(10)
        with pytest.raises(TimeoutError, match='x.lock'):
            with FileLock(path, timeout=0.2):
                pass
        begin = time.monotonic()
        with FileLock(path, timeout=10) as lock:
            assert lock.is_locked
        assert time.monotonic() - begin > 0.1
    finally:
        process.join()


def test_reentry_after_release(tmp_path):
    lock = FileLock(tmp_path / 'sub' / 'y.lock')
    with lock:
        assert lock.is_locked
    assert not lock.is_locked
    with lock:
        pass
