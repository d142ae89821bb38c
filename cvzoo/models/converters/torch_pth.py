"""Read PyTorch checkpoints (.pth / .pt) into NumPy arrays without importing torch.

Two layouts exist:

- the zip format (torch >= 1.6): ``<archive>/data.pkl`` plus one member
  ``<archive>/data/<key>`` of raw little-endian bytes per storage;
- the legacy format (before 1.6): a sequence of pickles (magic number, protocol
  version 1001, system info, the object, the list of storage keys) followed by each
  storage as an int64 element count and its bytes.

Both pickles are read by a restricted unpickler: it knows the handful of globals that
rebuild tensors and state dicts (``torch._utils._rebuild_tensor_v2`` and friends, the
storage classes, torch dtypes, ``collections.OrderedDict``), each mapped to a stand-in of
this module, and refuses every other global with :class:`UnsafePickleError`, so a
malicious file cannot run code.

The reader keeps no state that a file can change: each unpickler builds fresh stand-ins,
and every stand-in refuses the pickle BUILD opcode (``__setstate__``), so a refused file
cannot alter how a later file in the same process is read.

Example, on torchvision's ResNet-50 file::

    state = load_torch_file('resnet50-0676ba61.pth')
    state['fc.weight'].shape  # (1000, 2048)
"""

import collections
import logging
import math
import os
import pickle
import struct
import zipfile

import numpy

from cvzoo import errors

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
# Keys under which training scripts commonly nest the state dict, tried in this order.
STATE_DICT_KEYS = ('state_dict', 'model_state_dict', 'model', 'net', 'module')

_logger = logging.getLogger(__name__)

# element type name -> NumPy dtype of its bytes on disk (byte order added when read)
_ELEMENT_DTYPES = {
    'float64': 'f8', 'float32': 'f4', 'float16': 'f2', 'bfloat16': 'u2',
    'int64': 'i8', 'int32': 'i4', 'int16': 'i2', 'int8': 'i1', 'uint8': 'u1', 'bool': 'b1',
}
_STORAGE_CLASSES = {
    'DoubleStorage': 'float64', 'FloatStorage': 'float32', 'HalfStorage': 'float16',
    'BFloat16Storage': 'bfloat16', 'LongStorage': 'int64', 'IntStorage': 'int32',
    'ShortStorage': 'int16', 'CharStorage': 'int8', 'ByteStorage': 'uint8',
    'BoolStorage': 'bool', 'UntypedStorage': 'uint8',
}
_TORCH_DTYPES = {
    'float64': 'float64', 'double': 'float64', 'float32': 'float32', 'float': 'float32',
    'float16': 'float16', 'half': 'float16', 'bfloat16': 'bfloat16', 'int64': 'int64',
    'long': 'int64', 'int32': 'int32', 'int': 'int32', 'int16': 'int16', 'short': 'int16',
    'int8': 'int8', 'uint8': 'uint8', 'bool': 'bool',
}


class UnsafePickleError(errors.CorruptFileError):
    """A checkpoint's pickle asked for a global outside the allowed tensor-rebuilding set."""


class _RefusedBuild(pickle.UnpicklingError):
    """A pickle tried to set the state of a stand-in (BUILD); reported as UnsafePickleError."""


class _StandIn:
    """Base of every object a checkpoint's pickle can reach: refuses BUILD.

    The unpickler's BUILD opcode calls ``__setstate__`` when an object has one; without
    it, BUILD would write into the object's attributes.
    """

    __slots__ = ()

    def __setstate__(self, state):
        raise _RefusedBuild(f'the pickle tries to set the state of {type(self).__name__} '
                            '(BUILD); a weight file may only rebuild tensors and state dicts')


class _ElementType(_StandIn):
    """Stand-in for a torch storage class or a torch dtype: names an element type."""

    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name


class _TensorType(_StandIn):
    """Stand-in for ``torch.Tensor`` / ``torch.nn.Parameter`` in ``_rebuild_from_type_v2``."""

    __slots__ = ()


class _Function(_StandIn):
    """Stand-in for an allowed torch function: calls ``function`` (no attributes to set)."""

    __slots__ = ('function',)

    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        return self.function(*args)


def _decode(raw, element_type, byteorder):
    """Turn raw bytes into a 1-d array of native byte order (bfloat16 -> float32)."""
    dtype = numpy.dtype(_ELEMENT_DTYPES[element_type])
    dtype = dtype.newbyteorder('<' if byteorder == 'little' else '>')
    data = numpy.frombuffer(raw, dtype=dtype, count=len(raw) // dtype.itemsize)
    if element_type == 'bfloat16':
        # NOTE: a bfloat16 is the upper half of a float32; NumPy has no bfloat16 dtype.
        return (data.astype(numpy.uint32) << 16).view(numpy.float32)
    return data.astype(dtype.newbyteorder('='), copy=False)


class _Storage(_StandIn):
    """The elements of one storage, or a view into a root storage (legacy format)."""

    __slots__ = ('element_type', 'numel', 'root', 'offset', 'data')

    def __init__(self, element_type, numel, root=None, offset=0):
        self.element_type = element_type
        self.numel = numel
        self.root = root
        self.offset = offset
        self.data = None

    def set_bytes(self, raw, byteorder, file_name):
        item_size = numpy.dtype(_ELEMENT_DTYPES[self.element_type]).itemsize
        if len(raw) != self.numel * item_size:
            raise errors.CorruptFileError(
                f'{file_name}: a storage should hold {self.numel * item_size} bytes, '
                f'the file has {len(raw)} (truncated?)')
        self.data = _decode(raw, self.element_type, byteorder)

    def elements(self):
        if self.root is None:
            return self.data
        return self.root.data[self.offset:self.offset + self.numel]


class _TensorRef(_StandIn):
    """A tensor waiting for its storage's bytes: turned into an array after unpickling."""

    __slots__ = ('storage', 'offset', 'size', 'stride', 'element_type')

    def __init__(self, storage, offset, size, stride, element_type=None):
        self.storage = storage
        self.offset = offset
        self.size = tuple(size)
        self.stride = tuple(stride)
        self.element_type = element_type


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _TensorRef(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, *unused):
    return _TensorRef(storage, storage_offset, size, stride)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, hooks, dtype,
                       *unused):
    return _TensorRef(storage, storage_offset, size, stride, element_type=dtype.name)


def _rebuild_parameter(data, *unused):
    return data


def _rebuild_from_type_v2(func, new_type, args, state):
    if not (isinstance(func, _Function) and func.function in _REBUILD_FUNCTIONS
            and isinstance(new_type, _TensorType)):
        raise pickle.UnpicklingError('_rebuild_from_type_v2 got an unexpected function or type')
    return func(*args)


_REBUILD_FUNCTIONS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3,
                      _rebuild_parameter)


def _allowed_globals():
    """A fresh map (module, name) -> stand-in; built per unpickler, so no load sees
    objects another load could have touched."""
    allowed = {
        ('collections', 'OrderedDict'): collections.OrderedDict,
        ('torch._utils', '_rebuild_tensor'): _Function(_rebuild_tensor),
        ('torch._utils', '_rebuild_tensor_v2'): _Function(_rebuild_tensor_v2),
        ('torch._utils', '_rebuild_tensor_v3'): _Function(_rebuild_tensor_v3),
        ('torch._utils', '_rebuild_parameter'): _Function(_rebuild_parameter),
        ('torch._utils', '_rebuild_parameter_with_state'): _Function(_rebuild_parameter),
        ('torch._tensor', '_rebuild_from_type_v2'): _Function(_rebuild_from_type_v2),
        ('torch', 'Tensor'): _TensorType(),
        ('torch.nn.parameter', 'Parameter'): _TensorType(),
        ('torch.storage', 'UntypedStorage'): _ElementType('uint8'),
    }
    for name, element_type in _STORAGE_CLASSES.items():
        allowed['torch', name] = _ElementType(element_type)
        allowed['torch.cuda', name] = _ElementType(element_type)
    for name, element_type in _TORCH_DTYPES.items():
        allowed['torch', name] = _ElementType(element_type)
    return allowed


class _RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the allowed globals, to stand-ins of this module."""

    def __init__(self, file, file_name, persistent_load=None):
        super().__init__(file)
        self._file_name = file_name
        self._persistent_load = persistent_load
        self._globals = _allowed_globals()

    def find_class(self, module, name):
        try:
            return self._globals[module, name]
        except KeyError:
            raise UnsafePickleError(
                f'{self._file_name}: refused to load the global {module}.{name}; a weight '
                'file may only rebuild tensors and state dicts (the file is either not a '
                'plain checkpoint or tries to run code)') from None

    def persistent_load(self, pid):
        if self._persistent_load is None:
            raise pickle.UnpicklingError(f'unexpected persistent id {pid!r}')
        return self._persistent_load(pid)


def _check_storage_pid(pid, length):
    if not (isinstance(pid, tuple) and len(pid) == length and pid[0] == 'storage'
            and isinstance(pid[1], _ElementType)):
        raise pickle.UnpicklingError(f'unexpected persistent id {pid!r}')


def _load_zip(path):
    """Unpickle a zip-format checkpoint; return (object tree, storages by key)."""
    storages = {}

    def persistent_load(pid):
        _check_storage_pid(pid, 5)
        key = str(pid[2])
        if key not in storages:
            storages[key] = _Storage(pid[1].name, int(pid[4]))
        return storages[key]

    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        pickles = [name for name in names if name.rsplit('/', 1)[-1] == 'data.pkl']
        if not pickles:
            raise errors.CorruptFileError(f'{path}: a zip file without data.pkl is no checkpoint')
        prefix = pickles[0][:-len('data.pkl')]
        byteorder = 'little'
        if prefix + 'byteorder' in names:
            byteorder = archive.read(prefix + 'byteorder').decode('ascii').strip()
        with archive.open(pickles[0]) as file:
            tree = _RestrictedUnpickler(file, path, persistent_load).load()
        for key, storage in storages.items():
            storage.set_bytes(archive.read(prefix + 'data/' + key), byteorder, path)
    return tree


def _read_exactly(file, n_byte, path):
    raw = file.read(n_byte)
    if len(raw) != n_byte:
        raise errors.CorruptFileError(
            f'{path}: expected {n_byte} more bytes, the file ends after {len(raw)} (truncated?)')
    return raw


def _load_legacy(path):
    """Unpickle a legacy-format checkpoint; return the object tree."""
    storages = {}

    def persistent_load(pid):
        _check_storage_pid(pid, 6)
        root_key, view_metadata = str(pid[2]), pid[5]
        if root_key not in storages:
            storages[root_key] = _Storage(pid[1].name, int(pid[4]))
        if view_metadata is None:
            return storages[root_key]
        _view_key, offset, view_size = view_metadata
        return _Storage(pid[1].name, int(view_size), storages[root_key], int(offset))

    with open(path, 'rb') as file:
        if _RestrictedUnpickler(file, path).load() != LEGACY_MAGIC:
            raise errors.CorruptFileError(f'{path}: not a PyTorch checkpoint (wrong magic number)')
        protocol = _RestrictedUnpickler(file, path).load()
        if protocol != LEGACY_PROTOCOL:
            raise errors.CorruptFileError(
                f'{path}: unsupported legacy protocol version {protocol!r}, expected 1001')
        sys_info = _RestrictedUnpickler(file, path).load()
        byteorder = 'little' if sys_info.get('little_endian', True) else 'big'
        tree = _RestrictedUnpickler(file, path, persistent_load).load()
        for key in _RestrictedUnpickler(file, path).load():
            storage = storages[str(key)]
            numel, = struct.unpack('<q', _read_exactly(file, 8, path))
            storage.numel = numel
            item_size = numpy.dtype(_ELEMENT_DTYPES[storage.element_type]).itemsize
            storage.set_bytes(_read_exactly(file, numel * item_size, path), byteorder, path)
    return tree


def _materialize(ref, path):
    """Turn a _TensorRef into a C-contiguous array (copying through its strides)."""
    elements = ref.storage.elements()
    if elements is None:
        raise errors.CorruptFileError(f'{path}: a tensor refers to a storage that is missing')
    if ref.element_type is not None and ref.element_type != ref.storage.element_type:
        elements = _decode(elements.tobytes(), ref.element_type, 'little')
    if math.prod(ref.size) == 0:
        return numpy.empty(ref.size, dtype=elements.dtype)
    last = ref.offset + sum((n - 1) * s for n, s in zip(ref.size, ref.stride))
    if ref.offset < 0 or min(ref.stride, default=0) < 0 or last >= len(elements):
        raise errors.CorruptFileError(
            f'{path}: a tensor of size {ref.size}, stride {ref.stride} and offset {ref.offset} '
            f'does not fit its storage of {len(elements)} elements')
    view = numpy.lib.stride_tricks.as_strided(
        elements[ref.offset:], shape=ref.size,
        strides=[s * elements.itemsize for s in ref.stride], writeable=False)
    return numpy.array(view, order='C')


def _resolve(obj, path):
    """Replace every _TensorRef in a tree of dicts, lists and tuples by its array."""
    if isinstance(obj, _TensorRef):
        return _materialize(obj, path)
    if isinstance(obj, dict):
        resolved = type(obj)() if isinstance(obj, collections.OrderedDict) else {}
        for key, value in obj.items():
            resolved[key] = _resolve(value, path)
        return resolved
    if isinstance(obj, (list, tuple)):
        return type(obj)(_resolve(value, path) for value in obj)
    return obj


def is_legacy_torch_file(head: bytes) -> bool:
    """Tell from a file's first bytes whether it starts like a legacy PyTorch checkpoint."""
    return head.startswith(pickle.dumps(LEGACY_MAGIC, protocol=2)[:-1])


def load_torch_checkpoint(path):
    """Read a whole PyTorch checkpoint, tensors turned into NumPy arrays.

    Args:
        path (str or os.PathLike): a .pth/.pt file in the zip or the legacy format.

    Returns:
        The unpickled object (usually a dict), each tensor replaced by a C-contiguous
        ``numpy.ndarray`` of its dtype (bfloat16 becomes float32).

    Raises:
        UnsafePickleError: the pickle asks for a global outside the allowed set.
        cvzoo.errors.CorruptFileError: the file is truncated or not a checkpoint.
    """
    path = os.fspath(path)
    try:
        if zipfile.is_zipfile(path):
            tree = _load_zip(path)
        else:
            tree = _load_legacy(path)
        return _resolve(tree, path)
    except errors.CorruptFileError:
        raise
    except _RefusedBuild as exc:
        raise UnsafePickleError(f'{path}: refused: {exc}') from None
    except (pickle.UnpicklingError, EOFError, zipfile.BadZipFile, KeyError, ValueError,
            TypeError, IndexError, AttributeError, struct.error, UnicodeDecodeError) as exc:
        raise errors.CorruptFileError(
            f'{path}: cannot read it as a PyTorch checkpoint ({type(exc).__name__}: {exc})'
        ) from exc


def find_state_dict(checkpoint):
    """Pick the state dict out of a checkpoint.

    Args:
        checkpoint (dict): what :func:`load_torch_checkpoint` returned.

    Returns:
        tuple: ``(state_dict, key)``: a dict name -> ``numpy.ndarray`` with only the
        array entries, and the key of ``checkpoint`` it was found under (None when the
        checkpoint itself is the state dict).

    Raises:
        TypeError: ``checkpoint`` is not a dict.
        ValueError: no dict of arrays is found.
    """
    if not isinstance(checkpoint, dict):
        raise TypeError(f'checkpoint: expected a dict, got {type(checkpoint).__name__}')
    candidates = [(None, checkpoint)]
    candidates += [(key, checkpoint[key]) for key in STATE_DICT_KEYS
                   if isinstance(checkpoint.get(key), dict)]
    for key, candidate in reversed(candidates):
        arrays = {name: value for name, value in candidate.items()
                  if isinstance(value, numpy.ndarray)}
        if arrays:
            return arrays, key
    raise ValueError(
        f'checkpoint: expected a dict of tensors or one under {STATE_DICT_KEYS}, got a dict '
        f'with keys {sorted(map(str, checkpoint))[:20]}')


def load_torch_file(path) -> dict:
    """Read the state dict of a PyTorch checkpoint as NumPy arrays, without torch.

    A state dict nested under ``'state_dict'``, ``'model_state_dict'``, ``'model'``,
    ``'net'`` or ``'module'`` is found; the key used is logged at INFO level.

    Args:
        path (str or os.PathLike): a .pth/.pt file in the zip or the legacy format.

    Returns:
        dict: parameter name -> C-contiguous ``numpy.ndarray``, in the file's order and
        dtype (float16 stays float16; bfloat16 becomes float32).

    Raises:
        UnsafePickleError: the pickle asks for a global outside the allowed set.
        cvzoo.errors.CorruptFileError: the file is truncated, not a checkpoint, or holds
            no tensors.
    """
    checkpoint = load_torch_checkpoint(path)
    try:
        state_dict, key = find_state_dict(checkpoint)
    except (TypeError, ValueError) as exc:
        raise errors.CorruptFileError(f'{os.fspath(path)}: {exc}') from None
    if key is not None:
        _logger.info('%s: using the state dict under the key %r', os.fspath(path), key)
    return state_dict
