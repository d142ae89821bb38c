"""Fetch files safely: streamed, hash-checked, renamed into place only when complete.

``download`` writes ``<path>.part`` and renames it to ``path`` only after the sha256
matched, so no half-written file is ever left under the final name. ``cached_download``
keeps files under ``$CVZOO_HOME``, tries ``$CVZOO_WEIGHTS_MIRROR`` first (DESIGN.md,
"Pretrained weights"), and holds a file lock so that several processes download once.
``extract_archive`` unpacks zip and tar files, refusing entries that would land outside
the destination.
"""

import contextlib
import errno
import hashlib
import math
import os
import pathlib
import shutil
import socket
import stat
import tarfile
import tempfile
import threading
import time
import urllib.parse
import zipfile
from typing import Optional, Union

import requests

from cvzoo import errors
from cvzoo.utils import paths
from cvzoo.utils.file_lock import FileLock
from cvzoo.utils.progress import ProgressBar

PathLike = Union[str, os.PathLike]

_CHUNK = 1 << 20
_RETRY_PAUSE = 0.2  # seconds, doubled after each failed attempt
_TRANSIENT = (requests.ConnectionError, requests.Timeout,
              requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)


class _Incomplete(Exception):
    """The server closed the stream before sending every byte it announced."""


class _DeadlinePassed(Exception):
    """The file's total deadline passed while its bytes were still coming."""


class _Watchdog:
    """Cut a streaming response's connection when the file's deadline passes.

    A read timeout bounds each wait for a byte, not the whole file: a server that sends
    one byte every few seconds would hold a download (and its file lock) for ever. The
    socket is shut down from a timer thread, which wakes the blocked read.
    """

    def __init__(self, response, seconds):
        self.expired = False
        self._response = response
        self._timer = threading.Timer(max(seconds, 0.0), self._cut)
        self._timer.daemon = True

    def _cut(self):
        self.expired = True
        sock = _socket_of(self._response)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._response.close()

    def __enter__(self):
        self._timer.start()
        return self

    def __exit__(self, *exc_info):
        self._timer.cancel()


def _socket_of(response):
    """The socket under a requests response (urllib3 1.x or 2.x), or None."""
    raw = response.raw
    connection = getattr(raw, 'connection', None) or getattr(raw, '_connection', None)
    sock = getattr(connection, 'sock', None)
    if sock is None:  # urllib3 1.x: through http.client's file object
        fp = getattr(getattr(raw, '_fp', None), 'fp', None)
        sock = getattr(getattr(fp, 'raw', None), '_sock', None)
    return sock


def sha256_of(path: PathLike) -> str:
    """Return the hex sha256 of a file, read in 1 MB chunks."""
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(_CHUNK), b''):
            digest.update(chunk)
    return digest.hexdigest()


def _local_source(url: str) -> Optional[pathlib.Path]:
    """The local file a ``file://`` URL or a plain path names; None for http(s)."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == 'file':
        return pathlib.Path(urllib.parse.unquote(parsed.path))
    if parsed.scheme in ('http', 'https'):
        return None
    return pathlib.Path(url)


def _copy_local(source: pathlib.Path, part: pathlib.Path, url: str) -> None:
    """Copy a local file into a fresh ``part``.

    Never a hard link: the ``.part`` file is later resumed (written) by an http
    download, and writing through a link would change the user's own file.
    """
    if not source.is_file():
        raise errors.DownloadError(f'{url}: no such file')
    _discard(part)
    with open(source, 'rb') as src, open(part, 'xb') as dst:
        shutil.copyfileobj(src, dst, _CHUNK)


def _discard(part: pathlib.Path) -> None:
    """Remove ``part`` (a file, a link or nothing); only the name goes, never a target."""
    try:
        os.unlink(part)
    except FileNotFoundError:
        pass


def _resumable_size(part: pathlib.Path) -> int:
    """The bytes already in ``part`` worth resuming; 0 when there is none.

    A ``.part`` that is a symbolic link or has other hard links is not a file cvzoo
    created (an older version hard-linked mirror files): it is discarded, not resumed.
    """
    try:
        info = os.lstat(part)
    except FileNotFoundError:
        return 0
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        _discard(part)
        return 0
    return info.st_size


def _open_part(part: pathlib.Path, append: bool):
    """Open ``part`` for appending, or create it afresh; never through a link."""
    if not append:
        _discard(part)
        return open(part, 'xb')
    file = open(part, 'ab')
    if os.fstat(file.fileno()).st_nlink > 1:  # linked since we looked: never write there
        file.close()
        raise errors.DownloadError(f'{part}: has other hard links; refusing to write to it')
    return file


def _fetch_http(url: str, part: pathlib.Path, timeout: float, quiet, deadline_at: float):
    """Stream ``url`` into ``part``, resuming with a Range request when it already holds bytes."""
    offset = _resumable_size(part)
    headers = {'Range': f'bytes={offset}-'} if offset else {}
    remaining = deadline_at - time.monotonic()
    with requests.get(url, stream=True, timeout=min(timeout, max(remaining, 0.01)),
                      headers=headers) as response, _Watchdog(response, remaining) as watchdog:
        try:
            _write_body(url, response, part, offset, quiet)
        except Exception:
            if watchdog.expired:
                raise _DeadlinePassed() from None
            raise
        if watchdog.expired:  # a cut stream without Content-Length ends like a whole one
            raise _DeadlinePassed()


def _write_body(url, response, part, offset, quiet):
    """Check the answer's status and stream its body into ``part``."""
    if response.status_code == 416:  # nothing past our bytes: they are not its file
        _discard(part)
        raise _Incomplete(f'{url}: the server refused to resume at byte {offset}')
    if offset and response.status_code == 200:
        offset = 0  # the server ignores the range: start again
    if response.status_code >= 500:  # the server's trouble: worth a retry
        raise requests.ConnectionError(f'HTTP status {response.status_code}')
    if response.status_code not in (200, 206):
        raise errors.DownloadError(f'{url}: HTTP status {response.status_code}')
    length = response.headers.get('Content-Length')
    expected = offset + int(length) if length is not None else None
    with _open_part(part, append=offset > 0) as f, ProgressBar(
            total=expected, desc=part.name[:-5], quiet=quiet, unit='B') as bar:
        bar.update(offset)
        for chunk in response.iter_content(_CHUNK):
            f.write(chunk)
            bar.update(len(chunk))
    if expected is not None and part.stat().st_size < expected:
        raise _Incomplete(f'{url}: got {part.stat().st_size} of {expected} bytes')


def _fetch_with_retries(url: str, part: pathlib.Path, retries: int, timeout: float, quiet,
                        deadline: float):
    deadline_at = time.monotonic() + deadline
    pause = _RETRY_PAUSE
    for attempt in range(retries + 1):
        try:
            _fetch_http(url, part, timeout, quiet, deadline_at)
            return
        except _DeadlinePassed:
            raise errors.DownloadError(
                f'{url}: gave up after the deadline of {deadline:g} s for one file (set '
                f'CVZOO_DOWNLOAD_DEADLINE for slow links); {_size_of(part)} bytes are kept '
                f'in {part} and resumed next time') from None
        except (_Incomplete,) + _TRANSIENT as exc:
            if attempt == retries or time.monotonic() + pause >= deadline_at:
                raise errors.DownloadError(
                    f'{url}: failed after {attempt + 1} attempts: {exc}') from exc
            time.sleep(pause)
            pause *= 2


def _checked_deadline(deadline):
    """The ``deadline`` argument when it is a finite number of seconds > 0: an infinite
    one would stop the watchdog's timer thread (and so the deadline) at its start."""
    if not (isinstance(deadline, (int, float)) and math.isfinite(deadline) and deadline > 0):
        raise errors.UsageError(f'deadline: expected a finite number of seconds > 0, got '
                                f'{deadline!r}')
    return deadline


def _size_of(path):
    try:
        return os.lstat(path).st_size
    except FileNotFoundError:
        return 0


def download(url: str, path: PathLike, sha256: Optional[str] = None, *, retries: int = 3,
             quiet: Optional[bool] = None, timeout: float = 30.0,
             deadline: Optional[float] = None) -> pathlib.Path:
    """Download ``url`` to ``path`` through ``path + '.part'``, checking the sha256.

    http(s) downloads are streamed with a progress bar; a dropped connection is retried
    up to ``retries`` times, resuming with a Range request when the server allows it.
    ``file://`` URLs and plain local paths are copied (never linked, so nothing cvzoo
    writes can reach the user's file). A ``.part`` left by an interrupted run is resumed
    only when it is a plain file with no other links. The ``.part`` file is renamed to
    ``path`` only after its sha256 matched; on a mismatch it is deleted.

    Args:
        url (str): http(s)://, file:// or a local path.
        path (str or Path): the destination file; its folder is created.
        sha256 (str or None): the expected hex digest; None skips the check.
        retries (int): extra attempts after a dropped connection or a 5xx answer.
        quiet (bool or None): progress bar switch, as in cvzoo.utils.progress.
        timeout (float): seconds to wait for the server to answer or send data.
        deadline (float or None): seconds the whole file may take, retries included;
            None: ``$CVZOO_DOWNLOAD_DEADLINE`` (default 3600). A server that keeps
            sending a trickle never hits ``timeout``; the deadline ends the download.

    Returns:
        pathlib.Path: ``path``.

    Raises:
        cvzoo.errors.DownloadError: the file could not be fetched, or its hash differs
            (the message names the URL, the expected and the actual hash).
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + '.part')
    source = _local_source(url)
    try:
        if source is not None:
            _copy_local(source, part, url)
        else:
            deadline = paths.download_deadline() if deadline is None else \
                _checked_deadline(deadline)
            _fetch_with_retries(url, part, retries, timeout, quiet, deadline)
    except errors.DownloadError:
        raise
    except (requests.RequestException, OSError) as exc:
        raise errors.DownloadError(f'{url}: {exc}') from exc
    if sha256 is not None:
        actual = sha256_of(part)
        if actual != sha256.lower():
            part.unlink()
            raise errors.DownloadError(
                f'{url}: sha256 mismatch: expected {sha256.lower()}, got {actual}; '
                f'the file was deleted')
    os.replace(part, path)
    return path


def _mirror_source(file_name: str) -> Optional[str]:
    mirror = paths.weights_mirror()
    if mirror is None:
        return None
    if urllib.parse.urlparse(mirror).scheme in ('http', 'https', 'file'):
        return mirror.rstrip('/') + '/' + urllib.parse.quote(file_name)
    return str(pathlib.Path(mirror).expanduser() / file_name)


def _is_cached(target: pathlib.Path, sha256: Optional[str]) -> bool:
    return target.is_file() and (sha256 is None or sha256_of(target) == sha256.lower())


def cached_download(url: str, sha256: Optional[str] = None, *, file_name: Optional[str] = None,
                    subdir: str = '', mirror: bool = True, quiet: Optional[bool] = None,
                    deadline: Optional[float] = None, mirrors=()) -> pathlib.Path:
    """Return the path of ``url``'s file under ``$CVZOO_HOME/subdir``, fetching it once.

    A cached file is reused when its sha256 matches (or no hash is given). Otherwise
    the mirror ``$CVZOO_WEIGHTS_MIRROR`` (a folder holding ``file_name``, or a base URL
    to which ``/file_name`` is appended) is tried first, then ``url``, then each of
    ``mirrors`` in order, all checked against the same sha256. A file lock makes
    concurrent processes wait for one download.

    Args:
        url (str): the original location (http(s)://, file:// or a path).
        sha256 (str or None): expected hex digest of the file.
        file_name (str or None): the cached and mirrored name; default the last part of
            the URL's path.
        subdir (str): folder under ``$CVZOO_HOME``.
        mirror (bool): False skips ``$CVZOO_WEIGHTS_MIRROR``.
        quiet (bool or None): progress bar switch.
        deadline (float or None): seconds each source may take for the file, as in
            :func:`download`.
        mirrors (sequence of str): further URLs of the same file, tried after ``url``.

    Returns:
        pathlib.Path: the cached file.

    Raises:
        cvzoo.errors.DownloadError: every source failed; the message names the URL, each
            failure, and the path where the file can be put by hand.
    """
    if file_name is None:
        file_name = pathlib.PurePosixPath(urllib.parse.urlparse(url).path).name
        if not file_name:
            raise ValueError(f'file_name: expected a name, and none can be taken from {url!r}')
    target = paths.cvzoo_home() / subdir / file_name
    if _is_cached(target, sha256):  # complete files only ever appear by a rename: no lock
        return target
    deadline = paths.download_deadline() if deadline is None else deadline
    with download_lock(target.with_name(target.name + '.lock'), deadline, target):
        if _is_cached(target, sha256):
            return target
        _require_writable(target.parent, _fetch_need(target))
        sources = [_mirror_source(file_name)] if mirror else []
        sources = [s for s in sources if s is not None] + [url] + list(mirrors)
        failures = []
        for source in sources:
            try:
                return download(source, target, sha256, quiet=quiet, deadline=deadline)
            except errors.DownloadError as exc:
                failures.append(str(exc))
    raise errors.DownloadError(
        f'could not fetch {url}: ' + '; '.join(failures) +
        f'. If this machine is offline, download the file elsewhere and put it at {target} '
        f'(or set CVZOO_WEIGHTS_MIRROR to a folder holding {file_name})')


_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


def _fetch_need(target):
    """Why a file has to be written into the cache, for the messages."""
    return f'{target} is absent or not verified, so it has to be fetched'


@contextlib.contextmanager
def _read_only_named(folder, need):
    """Turn a refused write into ``folder`` (a read-only cache, e.g. another user's)
    into a DownloadError naming the folder, ``need`` and CVZOO_HOME."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _READ_ONLY:
            raise
        raise errors.DownloadError(
            f'{folder}: cannot write there ({exc.strerror or exc}), and {need}. Make the '
            f'folder writable, or set CVZOO_HOME to a writable folder (CVZOO_HOME is '
            f'{paths.cvzoo_home()}; a read-only cache still serves the files it holds)') \
            from exc


def _make_folder(folder, need):
    """Create ``folder``; DownloadError naming it when that is not possible."""
    with _read_only_named(folder, need):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:
            raise errors.DownloadError(f'{folder}: expected a folder for the download, but '
                                       f'{exc.filename} is a file; remove it') from exc


def _require_writable(folder, need):
    """Create ``folder`` if needed and check that a file can be created in it (an
    unnamed one where the system allows it), so that a read-only cache is named before
    any source is tried."""
    _make_folder(folder, need)
    with _read_only_named(folder, need), tempfile.TemporaryFile(dir=folder):
        pass


@contextlib.contextmanager
def download_lock(lock_path, deadline: float, target):
    """Hold the file lock ``lock_path`` while ``target`` (a file or a dataset folder) is
    fetched.

    A process that has to wait says once which process holds the lock (its pid is in
    the lock file), and gives up after ``deadline`` seconds: a holder that is stopped
    (SIGSTOP) or hung would otherwise keep it waiting for ever.

    Raises:
        cvzoo.errors.DownloadError: the lock is still held after ``deadline`` seconds
            (the message names the lock file and the holder's pid), or the lock file
            cannot be created (a read-only cache: the message names the folder).
    """
    lock_path = pathlib.Path(lock_path)
    _make_folder(lock_path.parent, _fetch_need(target))
    lock = FileLock(lock_path, timeout=deadline)
    try:
        with _read_only_named(lock_path.parent, _fetch_need(target)):
            lock.acquire()
    except TimeoutError as exc:
        pid = lock.holder_pid()
        raise errors.DownloadError(
            f'{lock_path}: gave up after {deadline:g} s (the download deadline, '
            f'CVZOO_DOWNLOAD_DEADLINE) waiting for {lock.holder_description()}, which holds '
            f'this lock to fetch {target}; if that process is stopped or hung, end it'
            + (f' (kill {pid})' if pid is not None else '')) from exc
    try:
        yield lock
    finally:
        lock.release()


def _check_member(archive: pathlib.Path, name: str, dst: pathlib.Path) -> None:
    pure = pathlib.PurePosixPath(name.replace('\\', '/'))
    if pure.is_absolute() or '..' in pure.parts or (pure.parts and ':' in pure.parts[0]):
        raise errors.CorruptFileError(
            f'{archive}: refusing entry {name!r}: it would be written outside {dst}')


def _check_tar_member(archive: pathlib.Path, member: tarfile.TarInfo, dst: pathlib.Path):
    _check_member(archive, member.name, dst)
    if member.issym() or member.islnk():
        base = dst / pathlib.PurePosixPath(member.name).parent if member.issym() else dst
        target = os.path.normpath(os.path.join(base, member.linkname))
        inside = os.path.commonpath([os.path.abspath(target), os.path.abspath(dst)])
        if os.path.isabs(member.linkname) or inside != os.path.abspath(dst):
            raise errors.CorruptFileError(
                f'{archive}: refusing link {member.name!r} -> {member.linkname!r}: '
                f'it points outside {dst}')
    elif not (member.isfile() or member.isdir()):
        raise errors.CorruptFileError(
            f'{archive}: refusing special entry {member.name!r} (device or fifo)')


def extract_archive(path: PathLike, dst: PathLike) -> pathlib.Path:
    """Unpack a zip, tar, tar.gz, tar.bz2 or tar.xz archive into ``dst``.

    Every entry is checked before anything is written: absolute paths, ``..``
    components, links pointing outside ``dst`` and device files are refused.

    Args:
        path (str or Path): the archive.
        dst (str or Path): the destination folder (created).

    Returns:
        pathlib.Path: ``dst``.

    Raises:
        cvzoo.errors.CorruptFileError: the archive is unreadable or holds an unsafe
            entry (the message names the archive and the entry).
    """
    path, dst = pathlib.Path(path), pathlib.Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                _check_member(path, name, dst)
            archive.extractall(dst)
        return dst
    try:
        with tarfile.open(path) as archive:
            members = archive.getmembers()
            for member in members:
                _check_tar_member(path, member, dst)
            if hasattr(tarfile, 'data_filter'):
                archive.extractall(dst, members=members, filter='data')
            else:
                archive.extractall(dst, members=members)
    except tarfile.TarError as exc:
        raise errors.CorruptFileError(f'{path}: not a readable zip or tar archive: {exc}') \
            from exc
    return dst
