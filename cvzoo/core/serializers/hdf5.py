"""Save and load a Link or Optimizer tree as an HDF5 file (needs h5py).

Keys become nested groups: 'conv1/W' is dataset W in group conv1.
"""

import math
import os

import numpy

from cvzoo import errors
from cvzoo.core.serializers import atomic_write as atomic_write_module
from cvzoo.core.serializers import dictionary, expansion_budget


def _import_h5py():
    try:
        import h5py
    except ImportError as exc:
        raise RuntimeError('HDF5 files need h5py; install it with: pip install h5py') from exc
    return h5py


def save_hdf5(filename, obj, compression=4):
    """Save ``obj``'s parameters, persistents (or optimizer state) to an HDF5 file.

    The file is written under a temporary name in the same folder and renamed when
    complete, so an error never leaves a half-written file behind.

    Args:
        filename (str or PathLike): where to write.
        obj: a Link, Optimizer or anything with ``serialize(serializer)``.
        compression (int): gzip level 0-9 (0: none).
    """
    h5py = _import_h5py()
    serializer = dictionary.DictionarySerializer()
    obj.serialize(serializer)
    with (atomic_write_module.atomic_write(filename) as tmp_path,
          h5py.File(tmp_path, 'w') as handle):
        for key, array in serializer.target.items():
            options = {}
            if compression and array.ndim > 0 and array.size > 0:
                options = {'compression': 'gzip', 'compression_opts': compression}
            handle.create_dataset(key, data=array, **options)


def _check_dataset(item, key, name, budget):
    """Check a dataset's declared size before reading it: a numeric dtype, and its
    bytes within the file's budget (a dataset may be compressed, or have no stored data
    at all and be filled with its fill value, so its shape alone says nothing). A chunk
    is inflated whole, and may be larger than its dataset, so it counts when larger."""
    if item.dtype.hasobject:
        raise errors.CorruptFileError(f'{name}: dataset {key!r} holds variable-length '
                                      f'data ({item.dtype}), expected numbers')
    n_byte = (item.size or 0) * item.dtype.itemsize
    n_chunk = math.prod(item.chunks) * item.dtype.itemsize if item.chunks else 0
    budget.spend(max(n_byte, n_chunk), f'dataset {key!r} of shape {item.shape}, chunks '
                 f'{item.chunks} and dtype {item.dtype}')


def read_hdf5(filename):
    """Return every dataset of an HDF5 file as a dict {'group/name': NumPy array}.

    The datasets together may take at most the file's
    :class:`~cvzoo.core.serializers.expansion_budget.ExpansionBudget`, checked from
    their declared shapes before any is read.

    Raises:
        cvzoo.errors.CorruptFileError: naming the file (and the dataset), when it cannot
            be read or declares more than its budget.
    """
    h5py = _import_h5py()
    name = os.fspath(filename)
    if not os.path.exists(name):
        raise errors.MissingFileError(f'{name}: no such weight file')
    budget = expansion_budget.ExpansionBudget(name)
    arrays = {}

    def collect(key, item):
        if isinstance(item, h5py.Dataset):
            _check_dataset(item, key, name, budget)
            arrays[key] = numpy.asarray(item[()])

    try:
        with h5py.File(name, 'r') as handle:
            handle.visititems(collect)
    except errors.CorruptFileError:
        raise
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise errors.CorruptFileError(f'{name}: not a readable HDF5 weight file ({exc})') from exc
    return arrays


def load_hdf5(filename, obj, path='', strict=True):
    """Load an HDF5 file into ``obj`` after checking that every key fits.

    Args and errors as in ``load_npz``.

    Returns:
        obj.
    """
    arrays = read_hdf5(filename)
    deserializer = dictionary.DictionaryDeserializer(
        arrays, path, strict, os.fspath(filename))
    return deserializer.load(obj)
