"""Write a file under a temporary name in its folder and rename it when complete."""

import contextlib
import glob
import os
import tempfile


@contextlib.contextmanager
def atomic_write(path):
    """Yield a temporary path next to ``path``; on success rename it to ``path``.

    On an exception the temporary file is removed and ``path`` keeps its old content, so
    no half-written file is ever left under the final name.

    Args:
        path (str or PathLike): the final file name.
    """
    path = os.fspath(path)
    folder, base = os.path.split(os.path.abspath(path))
    handle, tmp_path = tempfile.mkstemp(prefix=f'.{base}.', suffix='.tmp', dir=folder)
    os.close(handle)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp_path)
        raise


def remove_orphans(folder, name_pattern):
    """Remove the temporary files that interrupted atomic writes left in ``folder``.

    A process killed inside :func:`atomic_write` (SIGKILL, power loss) leaves its
    ``.<name>.<random>.tmp`` behind. Call this when no write to those names can be in
    progress, e.g. when a trainer starts.

    Args:
        folder (str or PathLike): where the files were written.
        name_pattern (str): a glob of the final names, e.g. ``'snapshot_iter_*'``.

    Returns:
        list of str: the files removed.
    """
    pattern = os.path.join(glob.escape(os.fspath(folder)), f'.{name_pattern}.*.tmp')
    removed = []
    for path in glob.glob(pattern):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
            removed.append(path)
    return removed
