"""Write a file under a temporary name in its folder and rename it when complete."""

import contextlib
import glob
import os
import secrets
import threading

_ATTEMPTS = 100  # names to try before giving up on a folder full of ours
# the temporary paths of the atomic writes in progress, per thread: a writer called on
# one of them (a snapshot's savefun calls save_npz) writes it directly, never a
# temporary name of a temporary name
_in_progress = threading.local()


def _active():
    if not hasattr(_in_progress, 'paths'):
        _in_progress.paths = set()
    return _in_progress.paths


def create_temporary(path):
    """Create an empty ``.<name>.<random>.tmp`` beside ``path`` and return its path.

    Unlike ``tempfile.mkstemp`` (mode 0600), the file gets the mode ``open()`` would
    give a new file, 0666 less the umask, so that a renamed file is as readable as one
    written in place.

    Args:
        path (str or PathLike): the final file name.
    """
    folder, base = os.path.split(os.path.abspath(os.fspath(path)))
    for _ in range(_ATTEMPTS):
        tmp_path = os.path.join(folder, f'.{base}.{secrets.token_hex(4)}.tmp')
        try:
            handle = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(handle)
        return tmp_path
    raise FileExistsError(f'{folder}: no free temporary name for {base} after '
                          f'{_ATTEMPTS} tries')


@contextlib.contextmanager
def atomic_write(path):
    """Yield a temporary path next to ``path``; on success rename it to ``path``.

    On an exception the temporary file is removed and ``path`` keeps its old content, so
    no half-written file is ever left under the final name. The file's mode honours the
    umask, as ``open()``'s would. Called on the temporary path of an atomic write in
    progress (in the same thread), it yields that path itself: the outer write renames it.

    Args:
        path (str or PathLike): the final file name.
    """
    path = os.fspath(path)
    if os.path.abspath(path) in _active():
        yield path
        return
    tmp_path = create_temporary(path)
    _active().add(tmp_path)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp_path)
        raise
    finally:
        _active().discard(tmp_path)


def remove_orphans(folder, name_pattern):
    """Remove the temporary files that interrupted atomic writes left in ``folder``.

    A process killed inside :func:`atomic_write` (SIGKILL, power loss) leaves its
    ``.<name>.<random>.tmp`` behind (and an older cvzoo, whose nested writes made
    temporary names of temporary names, ``..<name>.<random>.tmp.<random>.tmp``).
    Call this when no write to those names can be in progress, e.g. when a trainer
    starts.

    Args:
        folder (str or PathLike): where the files were written.
        name_pattern (str): a glob of the final names, e.g. ``'snapshot_iter_*'``.

    Returns:
        list of str: the files removed.
    """
    folder = glob.escape(os.fspath(folder))
    removed = []
    for pattern in (f'.{name_pattern}.*.tmp', f'..{name_pattern}.*.tmp'):
        for path in glob.glob(os.path.join(folder, pattern)):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
                removed.append(path)
    return removed
