"""An inter-process lock on a file (fcntl), so that several processes download once."""

import fcntl
import logging
import os
import pathlib
import time
from typing import Optional, Union

_POLL = 0.05  # seconds between tries while another process holds the lock
_logger = logging.getLogger(__name__)


class FileLock:
    """Hold an exclusive ``fcntl.flock`` on ``path`` inside a ``with`` block.

    The lock file is created if needed and left in place (removing it would race with a
    process that is about to lock it). The holder writes its pid into it, so that a
    process that has to wait says once, as a logging warning, which process it waits
    for. The lock is per open file, so it also excludes other threads of the same
    process that use their own FileLock. A lock file that is not writable (another
    user's) is still locked, through a read-only descriptor, without the pid.

    Args:
        path (str or Path): the lock file, usually ``<target>.lock``.
        timeout (float or None): seconds to wait before raising TimeoutError (naming the
            lock file and its holder's pid); None waits for ever.

    >>> import tempfile, os
    >>> with FileLock(os.path.join(tempfile.mkdtemp(), 'a.lock')):
    ...     pass
    """

    def __init__(self, path: Union[str, os.PathLike], timeout: Optional[float] = None):
        self.path = pathlib.Path(path)
        self.timeout = timeout
        self._fd = None

    def acquire(self) -> None:
        """Block until the lock is held (or raise TimeoutError after ``timeout`` s).

        Raises:
            TimeoutError: the lock is still held by another process after ``timeout``
                seconds; the message names the lock file and the holder's pid.
            OSError: the lock file can be neither created nor opened.
        """
        fd = self._open()
        try:
            if not _try_lock(fd):
                self._wait(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        _record_pid(fd)

    def _open(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:
            if not self.path.is_file():
                raise
            return os.open(self.path, os.O_RDONLY)  # flock needs no write access

    def _wait(self, fd):
        """Wait for the lock held by another process, saying once whom it waits for."""
        _logger.warning('waiting for the lock %s, held by %s%s', self.path,
                        self.holder_description(),
                        '' if self.timeout is None else f' (at most {self.timeout:g} s)')
        if self.timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return
        deadline = time.monotonic() + self.timeout
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise TimeoutError(f'{self.path}: still locked by {self.holder_description()} '
                                   f'after {self.timeout:g} s')
            time.sleep(_POLL)

    def holder_pid(self) -> Optional[int]:
        """The pid the lock's holder (or its last holder) wrote into the file; None when
        the file holds none."""
        try:
            text = self.path.read_text().strip()
        except (OSError, UnicodeDecodeError):
            return None
        return int(text) if text.isdigit() else None

    def holder_description(self) -> str:
        """'process 1234', or 'another process' when the file names none."""
        pid = self.holder_pid()
        return 'another process' if pid is None else f'process {pid}'

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


def _try_lock(fd) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _record_pid(fd) -> None:
    """Write this process's pid into the held lock file (skipped when it is read-only)."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f'{os.getpid()}\n'.encode(), 0)
    except OSError:
        pass
