"""Save and load a Link or Optimizer tree as an HDF5 file (needs h5py).

Keys become nested groups: 'conv1/W' is dataset W in group conv1.
"""

import os

import numpy

from cvzoo import errors
from cvzoo.core.serializers import atomic_write as atomic_write_module
from cvzoo.core.serializers import dictionary


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


def read_hdf5(filename):
    """Return every dataset of an HDF5 file as a dict {'group/name': NumPy array}.

    Raises:
        cvzoo.errors.CorruptFileError: naming the file, when it cannot be read.
    """
    h5py = _import_h5py()
    name = os.fspath(filename)
    if not os.path.exists(name):
        raise errors.MissingFileError(f'{name}: no such weight file')
    arrays = {}

    def collect(key, item):
        if isinstance(item, h5py.Dataset):
            arrays[key] = numpy.asarray(item[()])

    try:
        with h5py.File(name, 'r') as handle:
            handle.visititems(collect)
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
