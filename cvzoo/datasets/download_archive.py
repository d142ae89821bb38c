"""Fetch a dataset archive once and unpack it into the dataset folder, all or nothing."""

import os
import pathlib
import shutil
import tempfile
import urllib.parse
import zipfile

from cvzoo import errors
from cvzoo.utils import download, paths

ARCHIVE_SUBDIR = 'archives'  # under $CVZOO_HOME, where archives wait to be unpacked


def _merge(src, dst):
    """Move the tree ``src`` into ``dst``, entry by entry, merging folders that exist."""
    for entry in sorted(src.iterdir()):
        target = dst / entry.name
        if entry.is_dir() and not entry.is_symlink() and target.is_dir():
            _merge(entry, target)
        else:
            os.replace(entry, target)


def _extract_then_move(archive, dst):
    """Unpack into a temporary folder beside ``dst``, then move the entries into place.

    A truncated or unsafe archive leaves nothing in ``dst``: the temporary folder is
    removed whatever happens.
    """
    dst.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix='.extracting-', dir=dst))
    try:
        download.extract_archive(archive, staging)
        _merge(staging, dst)
    except (zipfile.BadZipFile, EOFError) as error:  # a damaged member, met mid-way
        raise errors.CorruptFileError(f'{archive}: damaged archive ({error})') from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def download_archive(url, dst, expected, *, sha256=None, what='dataset'):
    """Make ``expected`` exist by downloading ``url`` and unpacking it into ``dst``.

    Nothing is done when ``expected`` already exists. Otherwise the archive is fetched
    with :func:`cvzoo.utils.download.cached_download` (so ``$CVZOO_WEIGHTS_MIRROR`` is
    tried first, and its ``.part`` file is renamed only after the sha256 matched), unpacked
    into a temporary folder under ``dst`` (entries outside it refused), moved into
    ``dst``, and deleted. A lock makes concurrent processes download and unpack once.

    Args:
        url (str): the archive's URL (zip or tar).
        dst (str or Path): the folder the archive's top-level entries land in.
        expected (str or Path): a file or folder the archive must provide.
        sha256 (str or None): the archive's hex digest; None skips the check.
        what (str): the dataset's name, for messages.

    Returns:
        pathlib.Path: ``expected``.

    Raises:
        cvzoo.errors.DownloadError: the archive could not be fetched or its hash differs;
            the message names the URL and where to put the files by hand.
        cvzoo.errors.CorruptFileError: the archive is unreadable, holds an entry outside
            ``dst``, or does not provide ``expected``.
    """
    dst, expected = pathlib.Path(dst), pathlib.Path(expected)
    if expected.exists():  # checked before locking, so a present dataset writes nothing
        return expected
    file_name = pathlib.PurePosixPath(urllib.parse.urlparse(url).path).name
    lock_path = paths.cvzoo_home() / ARCHIVE_SUBDIR / f'{file_name}.extract.lock'
    with download.download_lock(lock_path, paths.download_deadline(), expected):
        if expected.exists():
            return expected
        try:
            archive = download.cached_download(url, sha256, subdir=ARCHIVE_SUBDIR)
        except errors.DownloadError as error:
            raise errors.DownloadError(
                f'{what}: {expected} is absent and could not be downloaded ({error}). Put '
                f'the files by hand so that {expected} exists, or pass data_dir= a folder '
                f'in the same layout') from error
        try:
            _extract_then_move(archive, dst)
        finally:
            archive.unlink(missing_ok=True)
    if not expected.exists():
        raise errors.CorruptFileError(f'{what}: {url} was unpacked into {dst} but did not '
                                      f'provide {expected}; put the files there by hand')
    return expected
