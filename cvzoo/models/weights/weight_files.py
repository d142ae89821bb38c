"""Weight files: fetch and verify them, with trust on first use for unpublished hashes.

A file shipped inside the package (:mod:`cvzoo.models.weights.embedded`) is used first, once
it matches the entry's sha256; a shipped file that does not is refused
(CorruptFileError naming it). Other files are fetched through
:func:`cvzoo.utils.download.cached_download` into ``$CVZOO_HOME/weights`` (or found in
``$CVZOO_WEIGHTS_MIRROR``). A full sha256 is checked there; a published prefix is
checked here. A file whose source publishes no sha256 (``UNPUBLISHED``) is trusted the
first time it is fetched *and loads into its model*; its sha256 is then recorded in
``$CVZOO_HOME/weights/<file_name>.sha256`` (:func:`trust_record_path`), and every later
load is verified against that record
(:func:`cvzoo.models.zoo.load_weights` calls :func:`pending_trust`, then
:func:`record_trust` or :func:`drop_untrusted`). ``cvzoo download --forget MODEL KEY``
(:func:`forget_trust`) removes the record, the file and its converted cache.

:func:`fill_mirror` (``cvzoo download --all --to DIR``) copies the files of many entries
into a folder with a ``manifest.json``, for ``$CVZOO_WEIGHTS_MIRROR`` on a machine
with no network.
"""

import hashlib
import json
import logging
import os
import re
import shutil

from cvzoo import errors
from cvzoo.core.serializers import atomic_write
from cvzoo.models import registry
from cvzoo.models.weights import conversion_cache, embedded, weights_schema
from cvzoo.utils import paths

WEIGHTS_SUBDIR = 'weights'  # downloads go to $CVZOO_HOME/weights
MANIFEST_NAME = 'manifest.json'  # what fill_mirror writes beside the files

_logger = logging.getLogger(__name__)


def _cached_download(url, sha256, file_name, mirrors=()):
    # NOTE: imported here, so that the zoo imports without the download stack (requests).
    from cvzoo.utils import download

    return download.cached_download(url, sha256, file_name=file_name, subdir=WEIGHTS_SUBDIR,
                                    mirrors=mirrors)


def is_full_sha256(sha256):
    """True for 64 lowercase hex digits (a hash checked while downloading)."""
    return re.fullmatch('[0-9a-f]{64}', sha256) is not None


def trust_record_path(weight_file: weights_schema.WeightFile) -> str:
    """Where the trust-on-first-use record of an ``UNPUBLISHED`` file lives:
    ``$CVZOO_HOME/weights/<file_name>.sha256``, beside the downloaded file."""
    return os.fspath(paths.cvzoo_home() / WEIGHTS_SUBDIR / (weight_file.file_name + '.sha256'))


def _hash_problem(weight_file, path):
    """Check ``path`` against its entry's prefix or its trust record.

    Returns:
        tuple: ``(problem, pending)``: why the file fails (None if it passes), and for an
        ``UNPUBLISHED`` file seen for the first time, ``(record_path, sha256)`` to be
        written once the file has loaded (else None).
    """
    actual = sha256_of_file(path)
    if weight_file.sha256 != weights_schema.UNPUBLISHED:
        if actual.startswith(weight_file.sha256):
            return None, None
        return f'sha256 {actual} does not start with the published {weight_file.sha256}', None
    record = path + '.sha256'
    if not os.path.exists(record):
        return None, (record, actual)
    with open(record) as file:
        recorded = file.read().strip()
    if recorded == actual:
        return None, None
    return (f'sha256 {actual} differs from {recorded} recorded at the first download in '
            f'{record} (`cvzoo download --forget MODEL KEY` removes the record)'), None


def _shipped_sha256s():
    """file name -> sha256 of each file shipped with cvzoo, as its zoo entry gives it."""
    model_name, key = embedded.SHIPPED_WEIGHTS
    if model_name not in registry.list_models():
        return {}  # a registry without that model (a test's own) uses no shipped file
    weights = registry.resolve_weights(registry.get_model_class(model_name), key)
    return {f.file_name: f.sha256 for f in weights.all_files}


def _embedded_verified(weight_file):
    """The shipped copy of ``weight_file`` once its sha256 matches; None when cvzoo ships
    no file of that name and sha256.

    Raises:
        cvzoo.errors.CorruptFileError: the shipped copy is damaged (the message names it).
    """
    if _shipped_sha256s().get(weight_file.file_name) != weight_file.sha256:
        return None
    path = embedded.shipped_path(weight_file.file_name)
    actual = sha256_of_file(path)
    if actual != weight_file.sha256:
        raise errors.CorruptFileError(
            f'{path}: the copy of {weight_file.url} shipped with cvzoo is damaged (sha256 '
            f'{actual}, expected {weight_file.sha256}); reinstall cvzoo')
    return path


def fetch_file(weight_file: weights_schema.WeightFile) -> str:
    """The local, verified path of one file of an entry: the copy shipped with cvzoo,
    else the cache, ``$CVZOO_WEIGHTS_MIRROR``, its URL and its mirrors, in that order.

    Raises:
        cvzoo.errors.CorruptFileError: the shipped copy is damaged.
        cvzoo.errors.DownloadError: as :func:`fetch_weights`.
    """
    return _fetch_verified(weight_file)[0]


def _fetch_verified(weight_file):
    """Fetch one file; a hash that is a prefix or unpublished is checked here.

    The copy shipped with cvzoo comes first (:func:`_embedded_verified`). A cached file
    that fails the check is deleted and fetched once more; if the fresh copy fails too,
    it is deleted and DownloadError names the URL and the path.

    Returns:
        tuple: ``(path, pending)``, ``pending`` as in :func:`_hash_problem`.
    """
    shipped = _embedded_verified(weight_file)
    if shipped is not None:
        return shipped, None
    if is_full_sha256(weight_file.sha256):
        return os.fspath(_cached_download(weight_file.url, weight_file.sha256,
                                          weight_file.file_name, weight_file.mirrors)), None
    problem = None
    for _ in range(2):
        path = os.fspath(_cached_download(weight_file.url, None, weight_file.file_name,
                                          weight_file.mirrors))
        problem, pending = _hash_problem(weight_file, path)
        if problem is None:
            return path, pending
        _remove_failed(weight_file, path, problem)
    raise errors.DownloadError(f'{weight_file.url}: {problem}; the file {path} was deleted')


def _remove_failed(weight_file, path, problem):
    """Delete a cached file that failed its check, so that it is fetched again.

    Raises:
        cvzoo.errors.DownloadError: the file cannot be deleted (a read-only cache, e.g.
            another user's); the message names the check, the file and CVZOO_HOME.
    """
    try:
        os.remove(path)
    except OSError as exc:
        raise errors.DownloadError(
            f'{weight_file.url}: {problem}; the cached {path} cannot be deleted to fetch it '
            f'again ({exc.strerror or exc}): make {os.path.dirname(path)} writable, or set '
            f'CVZOO_HOME to a writable folder') from exc


def fetch_weights(weights: weights_schema.Weights) -> list:
    """Download (or find shipped with cvzoo, in the cache or in the mirror) every file of
    an entry, verified.

    ``sha256`` is checked in full when it has 64 hex digits, as a prefix when the source
    publishes only a prefix, and against the sha256 recorded at the first successful
    load (see :func:`cvzoo.models.zoo.load_weights`) for ``UNPUBLISHED``. Fetching
    alone records no trust: a file with no record is returned unverified.

    Returns:
        list of str: local paths, the main file first, then ``weights.files``.

    Raises:
        cvzoo.errors.DownloadError: a file cannot be fetched or fails its check (the file
            is deleted; the message names the URL and the path).
        cvzoo.errors.CorruptFileError: a file shipped with cvzoo fails its check (the
            message names it).
    """
    return [fetch_file(f) for f in weights.all_files]


def pending_trust(weights, fetched):
    """(record, sha256) of each fetched file with no published hash and no record yet.

    Args:
        weights (Weights): the entry.
        fetched (list of str): its files' local paths, from :func:`fetch_weights`.
    """
    return [(path + '.sha256', sha256_of_file(path))
            for f, path in zip(weights.all_files, fetched)
            if f.sha256 == weights_schema.UNPUBLISHED and not os.path.exists(path + '.sha256')]


def record_trust(pending, url):
    """Write the sha256 records of first-seen files that have loaded (see
    :func:`pending_trust`); ``url`` names the entry in the warning."""
    for record, sha256 in pending:
        _logger.warning('%s: its source publishes no sha256; trusting this first download, '
                        'which loaded, and recording its sha256 %s in %s', url, sha256, record)
        try:
            with atomic_write.atomic_write(record) as tmp_path, open(tmp_path, 'w') as file:
                file.write(sha256 + '\n')
        except OSError as exc:  # a read-only cache: the next load trusts it once more
            _logger.warning('could not record the sha256 in %s (%s)', record, exc)


def drop_untrusted(pending):
    """Delete first-seen files that did not load, so that the next load fetches them again."""
    for record, _ in pending:
        path = record[:-len('.sha256')]
        _logger.warning('%s: not trusted (it did not load) and deleted', path)
        for name in (path, path + conversion_cache.CONVERTED_SUFFIX):
            if os.path.exists(name):
                os.remove(name)


def forget_trust(model_class, key: str) -> list:
    """Undo trust on first use for the ``UNPUBLISHED`` files of a weight key.

    Removes each file's record ``$CVZOO_HOME/weights/<file_name>.sha256``, the
    downloaded file and its converted cache, so that the next load fetches the file
    again and trusts it only once it loads.

    Returns:
        list of str: the paths removed.

    Raises:
        ValueError: no such key.
    """
    weights = registry.resolve_weights(model_class, key)
    removed = []
    for weight_file in weights.all_files:
        if weight_file.sha256 != weights_schema.UNPUBLISHED:
            continue
        record = trust_record_path(weight_file)
        path = record[:-len('.sha256')]
        for name in (record, path, path + conversion_cache.CONVERTED_SUFFIX):
            if os.path.exists(name):
                os.remove(name)
                removed.append(name)
    return removed


def _copy_into(weight_file, folder):
    """Put one verified file into ``folder`` (fetched into the cache first, unless the
    folder already holds it with the entry's full sha256); return its manifest record."""
    target = os.path.join(folder, weight_file.file_name)
    if not (is_full_sha256(weight_file.sha256) and os.path.isfile(target)
            and sha256_of_file(target) == weight_file.sha256):
        path, _ = _fetch_verified(weight_file)
        with atomic_write.atomic_write(target) as tmp_path:
            shutil.copyfile(path, tmp_path)
    return {'name': weight_file.file_name, 'sha256': sha256_of_file(target),
            'size': os.path.getsize(target), 'url': weight_file.url}


def _add_to_mirror(records, weight_file, folder, user):
    """Copy ``weight_file`` into ``folder`` once and note ``user`` ('model/key') in its
    record; return a failure message, or None."""
    record = records.get(weight_file.file_name)
    if record is None:
        try:
            record = _copy_into(weight_file, folder)
        except errors.DownloadError as exc:
            return f'{user}: {exc}'
        record['weights'] = []
        records[weight_file.file_name] = record
    record['weights'].append(user)
    return None


def _read_manifest(path):
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as file:
            return {record['name']: record for record in json.load(file)['files']}
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise errors.CorruptFileError(f'{path}: not a cvzoo mirror manifest ({exc})') from exc


def fill_mirror(folder, entries) -> tuple:
    """Copy every file of ``entries`` into ``folder`` and list them in ``manifest.json``.

    Each file is fetched as a load would fetch it (``$CVZOO_WEIGHTS_MIRROR``, the origin,
    then the entry's mirrors; verified) into the cache, then copied under its
    ``file_name``, the name ``$CVZOO_WEIGHTS_MIRROR=folder`` looks for. A file that
    cannot be fetched is reported and the others are still copied. The manifest keeps
    the records of earlier runs into the same folder.

    Args:
        folder (str or os.PathLike): the mirror folder (created).
        entries: ``(model_name, key, Weights)`` items, as ``registry.iter_weights`` yields.

    Returns:
        tuple: ``(records, failures)``: the manifest records written by this call (dicts
        with ``name``, ``sha256``, ``size``, ``url`` and ``weights``, the ``model/key``
        names using the file), and one message per file that could not be fetched.
    """
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    manifest_path = os.path.join(folder, MANIFEST_NAME)
    manifest = _read_manifest(manifest_path)
    records, failures = {}, []
    for model_name, key, weights in entries:
        for weight_file in weights.all_files:
            failure = _add_to_mirror(records, weight_file, folder, f'{model_name}/{key}')
            if failure:
                failures.append(failure)
    manifest.update(records)
    with atomic_write.atomic_write(manifest_path) as tmp_path, open(tmp_path, 'w') as file:
        json.dump({'files': sorted(manifest.values(), key=lambda r: r['name'])}, file,
                  indent=1)
    return list(records.values()), failures


def sha256_of_file(path):
    """The sha256 of a file, as 64 lowercase hex digits."""
    digest = hashlib.sha256()
    with open(path, 'rb') as file:
        for block in iter(lambda: file.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()
