"""Write a file under a temporary name in its folder and rename it when complete."""

import contextlib
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
