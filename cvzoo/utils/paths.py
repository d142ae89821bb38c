"""Where cvzoo keeps its files: the only module that reads CVZOO_* environment variables.

Each function reads the environment on every call, so a test (or a user) can change a
variable at run time and be heard.

    CVZOO_HOME            cache of weights and downloads, default ``~/.cache/cvzoo``
    CVZOO_WEIGHTS_MIRROR  a folder or a base URL tried before the original URL; unset: none
    CVZOO_DATASET_ROOT    where datasets are found, default ``$CVZOO_HOME/datasets``
"""

import os
import pathlib
from typing import Optional


def cvzoo_home() -> pathlib.Path:
    """Return the cache folder ``$CVZOO_HOME`` (default ``~/.cache/cvzoo``), not created.

    >>> isinstance(cvzoo_home(), pathlib.Path)
    True
    """
    value = os.environ.get('CVZOO_HOME')
    if value:
        return pathlib.Path(value).expanduser()
    return pathlib.Path('~/.cache/cvzoo').expanduser()


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
