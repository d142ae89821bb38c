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

import contextlib
import math
import os
import zipfile
import zlib

import numpy
from numpy.lib import format as npy_format

from cvzoo import errors
from cvzoo.core.serializers import atomic_write as atomic_write_module
from cvzoo.core.serializers import dictionary, expansion_budget


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
_HEADER_READERS = {(1, 0): npy_format.read_array_header_1_0,
                   (2, 0): npy_format.read_array_header_2_0}


def _check_member(archive, info, name, budget):
    """Check one ``.npy`` member before NumPy allocates its array: its header's shape and
    dtype must account for exactly the bytes after the header, within the budget."""
    key = info.filename[:-len('.npy')]
    with archive.open(info) as member:
        version = npy_format.read_magic(member)
        if version not in _HEADER_READERS:
            raise errors.CorruptFileError(f'{name}: member {key!r} is a .npy of version '
                                          f'{version}, expected 1.0 or 2.0')
        shape, _, dtype = _HEADER_READERS[version](member)
        n_data = info.file_size - member.tell()
    if dtype.hasobject:
        raise errors.CorruptFileError(f'{name}: member {key!r} holds Python objects, which '
                                      'only a pickle can rebuild (read with allow_pickle=False)')
    if any(n < 0 for n in shape):
        raise errors.CorruptFileError(f'{name}: member {key!r} declares the shape {shape}')
    n_byte = math.prod(shape) * dtype.itemsize
    if n_byte != n_data:
        raise errors.CorruptFileError(
            f'{name}: member {key!r} declares shape {shape} of {dtype} ({n_byte} bytes), but '
            f'holds {n_data} bytes after its header')
    budget.spend(n_byte, f'member {key!r}')


@contextlib.contextmanager
def open_npz(file):
    """Open an ``.npz`` file once every member's declared size has been checked.

    Each ``.npy`` header's shape and dtype must match the bytes its member holds, and
    all members together must fit the file's
    :class:`~cvzoo.core.serializers.expansion_budget.ExpansionBudget`, so that a small
    file cannot make NumPy allocate what a forged header or a deflated run of zeros
    declares.

    Yields:
        numpy.lib.npyio.NpzFile: opened with ``allow_pickle=False``.

    Raises:
        FileNotFoundError: the file does not exist.
        cvzoo.errors.CorruptFileError: naming the file (and the member), when it is not a
            readable .npz or a member's size is wrong.
    """
    name = _name_of(file)
    budget = expansion_budget.ExpansionBudget(file, name)
    try:
        with zipfile.ZipFile(file) as archive:
            for info in archive.infolist():
                if info.filename.endswith('.npy'):
                    _check_member(archive, info, name, budget)
        if not isinstance(file, (str, os.PathLike)):
            file.seek(0)
        loaded = numpy.load(file, allow_pickle=False)
    except FileNotFoundError:
        raise
    except errors.CorruptFileError:
        raise
    except _READ_ERRORS as exc:
        raise errors.CorruptFileError(f'{name}: not a readable .npz weight file ({exc})') from exc
    with loaded:
        yield loaded


def read_npz(file):
    """Return the arrays of an ``.npz`` file as a dict {key: NumPy array}.

    Sizes are checked first (:func:`open_npz`).

    Raises:
        FileNotFoundError: the file does not exist.
        cvzoo.errors.CorruptFileError: naming the file, when it is not a readable .npz.
    """
    name = _name_of(file)
    with open_npz(file) as loaded:
        try:
            return {key: loaded[key] for key in loaded.files}
        except _READ_ERRORS as exc:
            raise errors.CorruptFileError(
                f'{name}: not a readable .npz weight file ({exc})') from exc


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
