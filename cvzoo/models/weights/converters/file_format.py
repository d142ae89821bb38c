"""Recognise a weight file's format from its bytes, and read any of them into arrays.

The name of a file says little (``.pth`` files are zip or legacy pickles, ``.h5`` and
``.hdf5`` are the same thing), so the zoo looks at the bytes:

    'torch_zip'        a zip archive holding ``data.pkl`` (torch >= 1.6)
    'torch_legacy'     a pickle stream starting with PyTorch's magic number
    'npz'              a zip archive of ``.npy`` members (cvzoo, ChainerCV)
    'hdf5'             the HDF5 signature at offset 0, 512, 1024 or 2048 (Keras)
    'darknet_weights'  a Darknet version header followed by whole float32 values
    'safetensors'      an 8-byte header length, then a JSON header (read with no pickle)

>>> import tempfile
>>> import numpy
>>> path = os.path.join(tempfile.mkdtemp(), 'weights.pth')  # the name says nothing
>>> with open(path, 'wb') as handle:
...     numpy.savez(handle, W=numpy.zeros((2, 3), numpy.float32))
>>> sniff_format(path)
'npz'
"""

import os
import struct
import zipfile

from cvzoo import errors
from cvzoo.core.serializers import hdf5 as hdf5_serializer
from cvzoo.core.serializers import npz as npz_serializer
from cvzoo.models.weights.converters import darknet, safetensors_file, torch_pth

FORMATS = ('torch_zip', 'torch_legacy', 'npz', 'hdf5', 'darknet_weights', 'safetensors')

HDF5_SIGNATURE = b'\x89HDF\r\n\x1a\n'
_HDF5_OFFSETS = (0, 512, 1024, 2048)
_ZIP_MAGICS = (b'PK\x03\x04', b'PK\x05\x06')
# Darknet versions seen in the wild are small; above 1000 marks transposed weights.
_DARKNET_MAX_VERSION = 100000


def _sniff_zip(path):
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except zipfile.BadZipFile as exc:
        raise errors.CorruptFileError(f'{path}: a broken zip archive ({exc})') from exc
    if any(name.rsplit('/', 1)[-1] == 'data.pkl' for name in names):
        return 'torch_zip'
    if names and all(name.endswith('.npy') for name in names):
        return 'npz'
    raise errors.CorruptFileError(
        f'{path}: a zip archive that is neither a PyTorch checkpoint (no data.pkl) nor an '
        f'.npz file (members {names[:5]})')


def _looks_like_darknet(head, size):
    if len(head) < 16:
        return False
    major, minor, revision = struct.unpack('<3i', head[:12])
    if not all(0 <= v < _DARKNET_MAX_VERSION for v in (major, minor, revision)):
        return False
    wide_seen = major * 10 + minor >= 2 and major < 1000 and minor < 1000
    n_byte = size - (20 if wide_seen else 16)
    return n_byte > 0 and n_byte % 4 == 0


def sniff_format(path) -> str:
    """Return the format of a weight file, recognised from its bytes.

    Args:
        path (str or os.PathLike): the file.

    Returns:
        str: one of ``'torch_zip'``, ``'torch_legacy'``, ``'npz'``, ``'hdf5'``,
        ``'darknet_weights'``, ``'safetensors'``.

    Raises:
        FileNotFoundError: no such file.
        cvzoo.errors.CorruptFileError: none of these formats; the message names the file
            and shows its first bytes.
    """
    path = os.fspath(path)
    size = os.path.getsize(path)
    with open(path, 'rb') as file:
        head = file.read(64)
        signatures = []
        for offset in _HDF5_OFFSETS:
            file.seek(offset)
            signatures.append(file.read(len(HDF5_SIGNATURE)))
    if head[:4] in _ZIP_MAGICS:
        return _sniff_zip(path)
    if HDF5_SIGNATURE in signatures:
        return 'hdf5'
    if torch_pth.is_legacy_torch_file(head):
        return 'torch_legacy'
    if safetensors_file.looks_like_safetensors(head, size):
        return 'safetensors'
    if _looks_like_darknet(head, size):
        return 'darknet_weights'
    raise errors.CorruptFileError(
        f'{path}: not a weight file cvzoo can read (expected one of {FORMATS}); '
        f'it starts with {head[:16]!r}')


def read_weight_file(path, file_format=None) -> dict:
    """Read any supported weight file into a flat dict of NumPy arrays.

    Args:
        path (str or os.PathLike): the file.
        file_format (str or None): one of :data:`FORMATS`; None sniffs it.

    Returns:
        dict: name -> ``numpy.ndarray``. PyTorch: the state dict's names; npz: its keys;
        HDF5: '/'-joined dataset paths; safetensors: its names; Darknet: ``'header'``
        (4,) int64 and ``'values'`` (N,) float32 (the model slices them in cfg order).

    Raises:
        ValueError: an unknown ``file_format``.
        cvzoo.errors.CorruptFileError: the file cannot be read; names the file.
    """
    file_format = file_format or sniff_format(path)
    readers = {
        'torch_zip': torch_pth.load_torch_file,
        'torch_legacy': torch_pth.load_torch_file,
        'npz': npz_serializer.read_npz,
        'hdf5': hdf5_serializer.read_hdf5,
        'darknet_weights': darknet.read_darknet_raw,
        'safetensors': safetensors_file.read_safetensors,
    }
    if file_format not in readers:
        raise ValueError(f'file_format: expected one of {FORMATS} or None, got {file_format!r}')
    return readers[file_format](os.fspath(path))
