"""The conversion cache: a foreign weight file, converted once to cvzoo's parameter names.

The model's ``convert_weights(raw, source)`` hook maps the names; the result is cached
as a cvzoo .npz beside the file inside ``$CVZOO_HOME`` (``<file>.cvzoo.npz``), else
under ``$CVZOO_HOME/converted``, stamped with the source file's sha256, the name
mapping and :data:`_CACHE_VERSION`. The caller writes the cache only once the arrays
have loaded into the model, so that a conversion that does not fit is never cached.
"""

import json
import logging
import os

import numpy

from cvzoo import errors
from cvzoo.core.serializers import atomic_write
from cvzoo.core.serializers import npz as npz_serializer
from cvzoo.models.weights.converters import file_format
from cvzoo.utils import paths

CONVERTED_SUFFIX = '.cvzoo.npz'
CACHE_KEY = '__cvzoo_converted_from__'  # the array holding the stamp
# raised when a converter's output changes, so that older cached conversions are redone
# (2: fasterrcnn_resnet50_fpn keeps the unused COCO classes of torchvision's predictor)
_CACHE_VERSION = 2
# The name mapping of a local file, from the format its bytes show.
_SNIFFED_SOURCES = {'npz': 'cvzoo', 'hdf5': 'cvzoo', 'safetensors': 'cvzoo',
                    'torch_zip': 'torch', 'torch_legacy': 'torch', 'darknet_weights': 'darknet'}
# Formats that can hold cvzoo's own parameter names: read as they are, never converted.
_NATIVE_FORMATS = ('npz', 'hdf5', 'safetensors')

_logger = logging.getLogger(__name__)


def source_of_file(path):
    """The name mapping a local weight file implies: 'cvzoo', 'torch' or 'darknet'.

    A ``.safetensors`` file is taken to hold cvzoo's names; pass ``source`` to
    ``load_weights`` for one written by another library (e.g. ``'torchvision'``).
    """
    return _SNIFFED_SOURCES[file_format.sniff_format(path)]


def _cache_path(path, source_sha256):
    """Where the converted copy of ``path`` is cached: beside it inside $CVZOO_HOME, else
    under $CVZOO_HOME/converted (cvzoo never writes into a user's or a mirror's folder)."""
    home = os.path.realpath(paths.cvzoo_home())
    if os.path.realpath(path).startswith(home + os.sep):
        return path + CONVERTED_SUFFIX
    name = f'{os.path.basename(path)}.{source_sha256[:16]}{CONVERTED_SUFFIX}'
    return os.fspath(paths.cvzoo_home() / 'converted' / name)


def _cache_stamp(source_sha256, source):
    stamp = json.dumps({'sha256': source_sha256, 'source': source, 'version': _CACHE_VERSION})
    return numpy.frombuffer(stamp.encode(), dtype=numpy.uint8)


def _read_cache(cache, stamp):
    """Return the cached arrays when the cache exists, reads and has ``stamp``; else None."""
    if not os.path.exists(cache):
        return None
    try:
        arrays = npz_serializer.read_npz(cache)
    except errors.CorruptFileError as exc:
        _logger.warning('%s; converting again', exc)
        return None
    if not numpy.array_equal(arrays.pop(CACHE_KEY, None), stamp):
        return None
    return arrays


def _write_cache(cache, arrays, stamp):
    os.makedirs(os.path.dirname(os.path.abspath(cache)), exist_ok=True)
    with atomic_write.atomic_write(cache) as tmp_path, open(tmp_path, 'wb') as file:
        numpy.savez(file, **arrays, **{CACHE_KEY: stamp})


def _convert(model, path, source):
    raw = file_format.read_weight_file(path)
    hook = getattr(model, 'convert_weights', None)
    arrays = raw if hook is None else hook(raw, source)
    if not isinstance(arrays, dict) or not all(
            isinstance(v, numpy.ndarray) for v in arrays.values()):
        raise TypeError(f'{type(model).__name__}.convert_weights: expected a dict of NumPy '
                        f'arrays, got {type(arrays).__name__}')
    return arrays


def converted_arrays(model, path, source, source_sha256):
    """Read ``path`` as cvzoo's parameter tree, converting it once.

    Returns:
        tuple: ``(arrays, save)``: the parameter tree, and a function that caches a fresh
        conversion (a no-op when the arrays came from the cache or need none). The caller
        calls ``save`` only once the arrays loaded into the model, so that a conversion
        that did not check out is never cached under the file's sha256.
    """
    if source == 'cvzoo' and file_format.sniff_format(path) in _NATIVE_FORMATS:
        return file_format.read_weight_file(path), lambda: None
    cache = _cache_path(path, source_sha256)
    stamp = _cache_stamp(source_sha256, source)
    arrays = _read_cache(cache, stamp)
    if arrays is not None:
        return arrays, lambda: None
    arrays = _convert(model, path, source)

    def save():
        try:
            _write_cache(cache, arrays, stamp)
        except OSError as exc:
            _logger.warning('could not cache the converted weights at %s (%s)', cache, exc)
    return arrays, save
