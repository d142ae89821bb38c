"""Save and load a Link or Optimizer tree as a NumPy ``.npz`` file (no pickle).

>>> import os, tempfile
>>> import numpy as np
>>> from cvzoo.core.links.link import Link
>>> from cvzoo.core.variable import Parameter
>>> class Affine(Link):
...     def __init__(self):
...         super().__init__()
...         with self.init_scope():
...             self.W = Parameter(np.arange(3, dtype=np.float32))
>>> path = os.path.join(tempfile.mkdtemp(), 'affine.npz')
>>> save_npz(path, Affine())
>>> target = Affine()
>>> target.W.array[...] = 0
>>> _ = load_npz(path, target)
>>> target.W.array
array([0., 1., 2.], dtype=float32)
"""

import os
import zipfile
import zlib

import numpy

from cvzoo import errors
from cvzoo.core.serializers import atomic_write as atomic_write_module
from cvzoo.core.serializers import dictionary


def _name_of(file):
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    return getattr(file, 'name', repr(file))


def save_npz(file, obj, compression=True):
    """Save ``obj``'s parameters, persistents (or optimizer state) to an ``.npz`` file.

    A path is written under a temporary name in the same folder and renamed when
    complete, so an error never leaves a half-written file behind.

    Args:
        file (str, PathLike or file object): where to write; a path is used as given
            (no '.npz' is appended).
        obj: a Link, Optimizer or anything with ``serialize(serializer)``.
        compression (bool): zip-compress the arrays.
    """
    serializer = dictionary.DictionarySerializer()
    obj.serialize(serializer)
    write = numpy.savez_compressed if compression else numpy.savez
    if not isinstance(file, (str, os.PathLike)):
        write(file, **serializer.target)
        return
    with atomic_write_module.atomic_write(file) as tmp_path, open(tmp_path, 'wb') as handle:
        write(handle, **serializer.target)


_READ_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def read_npz(file):
    """Return the arrays of an ``.npz`` file as a dict {key: NumPy array}.

    Raises:
        FileNotFoundError: the file does not exist.
        cvzoo.errors.CorruptFileError: naming the file, when it is not a readable .npz.
    """
    name = _name_of(file)
    try:
        loaded = numpy.load(file, allow_pickle=False)
    except FileNotFoundError:
        raise
    except _READ_ERRORS as exc:
        raise errors.CorruptFileError(f'{name}: not a readable .npz weight file ({exc})') from exc
    if not isinstance(loaded, numpy.lib.npyio.NpzFile):
        raise errors.CorruptFileError(f'{name}: holds one array, not an .npz of named arrays')
    try:
        with loaded:
            return {key: loaded[key] for key in loaded.files}
    except _READ_ERRORS as exc:
        raise errors.CorruptFileError(f'{name}: not a readable .npz weight file ({exc})') from exc


def load_npz(file, obj, path='', strict=True):
    """Load an ``.npz`` file into ``obj`` after checking that every key fits.

    Uninitialised (lazy) parameters are created with the loaded shape.

    Args:
        file (str, PathLike or file object): the file.
        obj: a Link, Optimizer or anything with ``serialize(serializer)``.
        path (str): the prefix of ``obj``'s keys in the file, e.g. 'updater/model:main/'.
        strict (bool): False loads the subset that fits, ignoring missing and unexpected
            keys; mis-shaped keys are refused either way.

    Returns:
        obj.

    Raises:
        cvzoo.errors.WeightLoadError: listing every missing, unexpected and mis-shaped key
            in one message; ``obj`` is left unchanged.
        cvzoo.errors.CorruptFileError: the file is truncated or not an .npz archive.
    """
    arrays = read_npz(file)
    deserializer = dictionary.DictionaryDeserializer(arrays, path, strict, _name_of(file))
    return deserializer.load(obj)
