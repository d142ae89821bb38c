"""An inter-process lock on a file (fcntl), so that several processes download once."""

import fcntl
import os
import pathlib
import time
from typing import Optional, Union


class FileLock:
    """Hold an exclusive ``fcntl.flock`` on ``path`` inside a ``with`` block.

    The lock file is created if needed and left in place (removing it would race with a
    process that is about to lock it). The lock is per open file, so it also excludes
    other threads of the same process that use their own FileLock.

    Args:
        path (str or Path): the lock file, usually ``<target>.lock``.
        timeout (float or None): seconds to wait before raising TimeoutError; None waits
            for ever.

    >>> import tempfile, os
    >>> with FileLock(os.path.join(tempfile.mkdtemp(), 'a.lock')):
    ...     pass
    """

    def __init__(self, path: Union[str, os.PathLike], timeout: Optional[float] = None):
        self.path = pathlib.Path(path)
        self.timeout = timeout
        self._fd = None

    def acquire(self) -> None:
        """Block until the lock is held (or raise TimeoutError after ``timeout`` s)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if self.timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._fd = fd
            return
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise TimeoutError(f'could not lock {self.path} within {self.timeout} s')
                time.sleep(0.05)

    def release(self) -> None:
        """Release the lock (no-op when not held)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def is_locked(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc_info):
        self.release()
        return False
