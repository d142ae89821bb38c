"""Read and write ``.safetensors`` weight files: cvzoo's recommended format for sharing.

A safetensors file is an 8-byte little-endian header length, a JSON header (name ->
dtype, shape, byte range) and the raw bytes of the arrays. Reading one runs no code
from the file and no pickle at all, unlike a ``.pth``; it is also read faster than a
compressed ``.npz``. The ``safetensors`` package is optional
(``pip install 'cvzoo[safetensors]'``) and imported only when a file is read or written;
recognising the format (:func:`looks_like_safetensors`) needs nothing.

>>> import os, tempfile
>>> import numpy
>>> path = os.path.join(tempfile.mkdtemp(), 'w.safetensors')
>>> write_safetensors(path, {'fc/W': numpy.ones((2, 3), numpy.float32)})  # doctest: +SKIP
>>> read_safetensors(path)['fc/W'].shape  # doctest: +SKIP
(2, 3)
"""

import json
import os
import struct

import numpy

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.serializers import atomic_write, dictionary

SUFFIX = '.safetensors'
_MAX_HEADER = 100 * 2 ** 20  # the safetensors package refuses larger headers too


def require_package():
    """The ``safetensors.numpy`` module; a clear error naming the extra when it is absent."""
    try:
        import safetensors  # noqa: PLC0415 - optional dependency
        import safetensors.numpy  # noqa: PLC0415
    except ImportError:
        raise errors.UsageError(
            "reading or writing .safetensors files needs the safetensors package: "
            "pip install 'cvzoo[safetensors]'") from None
    return safetensors


def looks_like_safetensors(head: bytes, size: int) -> bool:
    """True when a file's first bytes are a safetensors header that fits in the file.

    Args:
        head (bytes): the file's first bytes (at least 9 to say yes).
        size (int): the file's size in bytes.
    """
    if len(head) < 9:
        return False
    header_size, = struct.unpack('<Q', head[:8])
    return 2 <= header_size <= _MAX_HEADER and 8 + header_size <= size \
        and head[8:9] == b'{'


def read_safetensors(path) -> dict:
    """Read a safetensors file into a dict of NumPy arrays (no pickle involved).

    Args:
        path (str or os.PathLike): the file.

    Returns:
        dict: name -> ``numpy.ndarray`` (copies, not views of the mapped file).

    Raises:
        cvzoo.errors.UsageError: the safetensors package is not installed.
        cvzoo.errors.CorruptFileError: the file is truncated or its header is broken;
            the message names the file.
    """
    safetensors = require_package()
    path = os.fspath(path)
    try:
        with safetensors.safe_open(path, framework='np') as file:
            return {name: numpy.array(file.get_tensor(name)) for name in file.keys()}
    except (safetensors.SafetensorError, OSError, ValueError, json.JSONDecodeError) as exc:
        raise errors.CorruptFileError(f'{path}: not a readable safetensors file ({exc})') \
            from exc


def write_safetensors(path, arrays: dict, metadata: dict | None = None) -> None:
    """Write a dict of arrays as a safetensors file, atomically.

    Args:
        path (str or os.PathLike): the file to write (a temporary name is renamed).
        arrays (dict): name -> array-like (made contiguous NumPy arrays on the host).
        metadata (dict or None): str -> str, stored in the header.

    Raises:
        cvzoo.errors.UsageError: the safetensors package is not installed.
    """
    safetensors = require_package()
    # asarray(order='C'), not ascontiguousarray, which makes a scalar (a BN's N) a (1,)
    host = {name: numpy.asarray(value, order='C') for name, value in arrays.items()}
    with atomic_write.atomic_write(path) as tmp_path:
        mode = os.stat(tmp_path).st_mode
        safetensors.numpy.save_file(host, tmp_path, metadata=metadata)
        os.chmod(tmp_path, mode)  # save_file replaces the file by one of mode 0600


def save_safetensors(path, model) -> None:
    """Save a Link's parameters and persistent arrays as a safetensors file.

    The names are the same as ``cvzoo.core.serializers.save_npz`` writes
    (``'fc/W'``), so the file loads with ``load_weights`` / ``pretrained_model=``.

    Args:
        path (str or os.PathLike): the file to write.
        model (Link): the model (its arrays are copied to the host).
    """
    serializer = dictionary.DictionarySerializer()
    model.serialize(serializer)
    arrays = {name: backend.to_numpy(value) for name, value in serializer.target.items()}
    write_safetensors(path, arrays, metadata={'format': 'cvzoo'})
