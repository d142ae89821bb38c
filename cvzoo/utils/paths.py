"""Where cvzoo keeps its files: the only module that reads CVZOO_* environment variables.

Each function reads the environment on every call, so a test (or a user) can change a
variable at run time and be heard.

    CVZOO_HOME            cache of weights and downloads, default ``~/.cache/cvzoo``
    CVZOO_WEIGHTS_MIRROR  a folder or a base URL tried before the original URL; unset: none
    CVZOO_DATASET_ROOT    where datasets are found, default ``$CVZOO_HOME/datasets``
    CVZOO_DOWNLOAD_DEADLINE  seconds one file's download may take in all, default 3600
"""

import math
import os
import pathlib
from typing import Optional

from cvzoo import errors


def cvzoo_home() -> pathlib.Path:
    """Return the cache folder ``$CVZOO_HOME`` (default ``~/.cache/cvzoo``), not created.

    Raises:
        cvzoo.errors.UsageError: the path is there but is not a folder (a file, or a
            symbolic link to nothing); the message names CVZOO_HOME and the path.

    >>> isinstance(cvzoo_home(), pathlib.Path)
    True
    """
    value = os.environ.get('CVZOO_HOME')
    home = pathlib.Path(value or '~/.cache/cvzoo').expanduser()
    _check_folder(home, 'CVZOO_HOME' if value else 'CVZOO_HOME (unset: ~/.cache/cvzoo)')
    return home


def _check_folder(path: pathlib.Path, variable: str) -> None:
    """Raise UsageError when ``path`` exists (or is a link) but is no folder."""
    if path.is_dir():
        return
    if path.is_symlink() and not path.exists():
        raise errors.UsageError(f'{variable}: expected a folder, got {path}, a symbolic link to '
                                f'{os.readlink(path)}, which does not exist')
    if os.path.lexists(path):
        kind = 'a file' if path.is_file() else 'not a folder'
        raise errors.UsageError(f'{variable}: expected a folder, got {path}, which is {kind}')


def weights_mirror() -> Optional[str]:
    """Return ``$CVZOO_WEIGHTS_MIRROR`` (a folder path or a base URL), or None if unset."""
    value = os.environ.get('CVZOO_WEIGHTS_MIRROR')
    return value or None


def dataset_root() -> pathlib.Path:
    """Return the dataset folder ``$CVZOO_DATASET_ROOT`` (default ``$CVZOO_HOME/datasets``)."""
    value = os.environ.get('CVZOO_DATASET_ROOT')
    if value:
        return pathlib.Path(value).expanduser()
    return cvzoo_home() / 'datasets'


DEFAULT_DOWNLOAD_DEADLINE = 3600.0  # seconds: a 1 GB file at 300 kB/s


def download_deadline() -> float:
    """Return ``$CVZOO_DOWNLOAD_DEADLINE``: seconds a file's download may take, retries
    included (default 3600).

    Raises:
        cvzoo.errors.UsageError: the variable is set to something other than a finite
            number > 0 ('inf' would leave no deadline at all, which unset or a large
            number says plainly).
    """
    value = os.environ.get('CVZOO_DOWNLOAD_DEADLINE')
    if not value:
        return DEFAULT_DOWNLOAD_DEADLINE
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise errors.UsageError(f'CVZOO_DOWNLOAD_DEADLINE: expected a finite number of seconds '
                                f'> 0, got {value!r}')
    return seconds
