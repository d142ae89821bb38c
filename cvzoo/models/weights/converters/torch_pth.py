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

Sizes are checked before anything is allocated: every storage must fit in the bytes the
file holds for it (a zip member of exactly its declared size, a legacy storage inside the
rest of the file), every tensor must fit in its storage, and all the arrays of one file
together must stay within its :class:`~cvzoo.core.serializers.expansion_budget.ExpansionBudget`
(so a stride-0 tensor cannot broadcast one element into gigabytes). Every read of the
pickle is bounded by the bytes left, its memo is a dict (the C unpickler allocates a table
up to the largest memo index a file names), and trees nested more than ``MAX_DEPTH``
levels (or cyclic) are refused. Each error names the file and the tensor or storage.

The reader keeps no state that a file can change: each unpickler builds fresh stand-ins,
and every stand-in refuses the pickle BUILD opcode (``__setstate__``), so a refused file
cannot alter how a later file in the same process is read.

Example, on torchvision's ResNet-50 file::

    state = load_torch_file('resnet50-0676ba61.pth')
    state['fc.weight'].shape  # (1000, 2048)
"""

import collections
import io
import logging
import math
import os
import pickle
import struct
import zipfile

import numpy

from cvzoo import errors
from cvzoo.core.serializers import expansion_budget

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
# Keys under which training scripts commonly nest the state dict, tried in this order.
STATE_DICT_KEYS = ('state_dict', 'model_state_dict', 'model', 'net', 'module')
# Levels of dicts, lists and tuples a checkpoint may nest: real ones nest a handful
# (checkpoint -> 'model' -> state dict; an optimizer's state about five).
MAX_DEPTH = 100
# NumPy's own limit on dimensions.
MAX_NDIM = 32

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
    """The elements of one storage, or a view into a root storage (legacy format).

    ``load(storage, where)`` is set by the format's reader: it returns the storage's raw
    bytes after checking their size, and is called when a tensor first needs them.
    """

    __slots__ = ('element_type', 'numel', 'root', 'offset', 'data', 'load')

    def __init__(self, element_type, numel, root=None, offset=0):
        self.element_type = element_type
        self.numel = numel
        self.root = root
        self.offset = offset
        self.data = None
        self.load = None

    def item_size(self):
        return numpy.dtype(_ELEMENT_DTYPES[self.element_type]).itemsize

    def elements(self, byteorder, where):
        """The storage's 1-d array, read on first use; None when no bytes were stored."""
        if self.root is not None:
            root = self.root.elements(byteorder, where)
            return None if root is None else root[self.offset:self.offset + self.numel]
        if self.data is None and self.load is not None:
            self.data = _decode(self.load(self, where), self.element_type, byteorder)
        return self.data


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


class _BoundedReader:
    """The file an unpickler reads: no read may ask for more bytes than are left.

    A pickle declares the length of each string and bytes object before its bytes; a
    plain file's read(n) allocates n bytes first, so a tiny file could ask for terabytes.
    """

    def __init__(self, file, n_left, path):
        self._file = file
        self.n_left = n_left
        self._path = path

    def read(self, n=-1):
        if n is None or n < 0:
            n = self.n_left
        if n > self.n_left:
            raise errors.CorruptFileError(
                f'{self._path}: the pickle declares {n} bytes, but only {self.n_left} are '
                'left in it (a truncated or hostile file)')
        data = self._file.read(n)
        self.n_left -= len(data)
        return data

    def readline(self):
        line = self._file.readline(self.n_left)
        self.n_left -= len(line)
        return line


class _RestrictedUnpickler(pickle._Unpickler):
    """An unpickler that resolves only the allowed globals, to stand-ins of this module.

    It is Python's pure-Python unpickler: its memo is a dict, where the C unpickler
    allocates and clears a table as long as the largest memo index the file names (a
    10-byte pickle naming index 2**30 writes 16 GB).
    """

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
            and isinstance(pid[1], _ElementType) and isinstance(pid[4], int)):
        raise pickle.UnpicklingError(f'unexpected persistent id {pid!r}')


def _zip_member(archive, name, path):
    try:
        return archive.getinfo(name)
    except KeyError:
        raise errors.CorruptFileError(f'{path}: the archive has no member {name}') from None


def _zip_storage_loader(archive, prefix, key, path, budget):
    """``load`` of one zip storage: member ``<prefix>data/<key>``, of exactly the storage's
    declared size, counted in the budget and read in one bounded read."""

    def load(storage, where):
        name = f'{prefix}data/{key}'
        info = _zip_member(archive, name, path)
        n_byte = storage.numel * storage.item_size()
        if storage.numel < 0 or info.file_size != n_byte:
            raise errors.CorruptFileError(
                f'{path}: tensor {where!r} uses storage {key!r} of {storage.numel} '
                f'{storage.element_type} elements ({n_byte} bytes), but the member {name} '
                f'holds {info.file_size} bytes (truncated? corrupt?)')
        budget.spend(n_byte, f'storage {key!r} (of tensor {where!r})')
        with archive.open(info) as member:
            return _read_exactly(member, n_byte, path)

    return load


def _load_zip(archive, path, budget):
    """Unpickle a zip-format checkpoint; return (object tree, byte order)."""
    storages = {}

    def persistent_load(pid):
        _check_storage_pid(pid, 5)
        key = str(pid[2])
        if key not in storages:
            storages[key] = _Storage(pid[1].name, pid[4])
            storages[key].load = _zip_storage_loader(archive, prefix, key, path, budget)
        return storages[key]

    names = archive.namelist()
    for info in archive.infolist():
        if info.compress_size > budget.size:
            raise errors.CorruptFileError(
                f'{path}: the member {info.filename} claims {info.compress_size} bytes, more '
                f'than the whole {budget.size}-byte file')
    pickles = [name for name in names if name.rsplit('/', 1)[-1] == 'data.pkl']
    if not pickles:
        raise errors.CorruptFileError(f'{path}: a zip file without data.pkl is no checkpoint')
    prefix = pickles[0][:-len('data.pkl')]
    byteorder = 'little'
    if prefix + 'byteorder' in names:
        with archive.open(prefix + 'byteorder') as file:
            byteorder = file.read(16).decode('ascii').strip()
    info = _zip_member(archive, pickles[0], path)
    # NOTE: a pickle builds objects several times its size; one that inflates beyond
    # the whole file is a compression bomb, never a checkpoint.
    if info.file_size > budget.size:
        raise errors.CorruptFileError(
            f'{path}: {pickles[0]} inflates to {info.file_size} bytes, more than the whole '
            f'{budget.size}-byte file')
    with archive.open(info) as file:
        data = _read_exactly(file, info.file_size, path)
    # NOTE: a BytesIO, unlike a file, never allocates more than it holds for a read.
    tree = _RestrictedUnpickler(io.BytesIO(data), path, persistent_load).load()
    return tree, byteorder


def _read_exactly(file, n_byte, path):
    raw = file.read(n_byte)
    if len(raw) != n_byte:
        raise errors.CorruptFileError(
            f'{path}: expected {n_byte} more bytes, the file ends after {len(raw)} (truncated?)')
    return raw


def _legacy_storage_loader(file, path, budget, offset):
    """``load`` of one legacy storage: its bytes at ``offset``, counted in the budget."""

    def load(storage, where):
        n_byte = storage.numel * storage.item_size()
        budget.spend(n_byte, f'the storage of tensor {where!r}')
        file.seek(offset)
        return _read_exactly(file, n_byte, path)

    return load


def _locate_legacy_storages(file, reader, storages, path, budget):
    """Read the storage section: each root storage's element count and the offset of its
    bytes, checked against the rest of the file; the bytes themselves are read later."""
    keys = _RestrictedUnpickler(reader, path).load()
    if not isinstance(keys, list):
        raise errors.CorruptFileError(f'{path}: expected the list of storage keys, got '
                                      f'{type(keys).__name__}')
    for key in keys:
        storage = storages.get(str(key))
        if storage is None:
            raise errors.CorruptFileError(f'{path}: the storage {key!r} is listed but no '
                                          'tensor uses it')
        numel, = struct.unpack('<q', _read_exactly(reader, 8, path))
        n_byte = numel * storage.item_size()
        if not 0 <= n_byte <= reader.n_left:
            raise errors.CorruptFileError(
                f'{path}: storage {key!r} declares {numel} {storage.element_type} elements '
                f'({n_byte} bytes), but only {reader.n_left} bytes are left in the file')
        storage.numel = numel
        storage.load = _legacy_storage_loader(file, path, budget, file.tell())
        file.seek(n_byte, os.SEEK_CUR)
        reader.n_left -= n_byte


def _load_legacy(file, path, budget):
    """Unpickle a legacy-format checkpoint; return (object tree, byte order)."""
    storages = {}

    def persistent_load(pid):
        _check_storage_pid(pid, 6)
        root_key, view_metadata = str(pid[2]), pid[5]
        if root_key not in storages:
            storages[root_key] = _Storage(pid[1].name, pid[4])
        if view_metadata is None:
            return storages[root_key]
        _view_key, offset, view_size = view_metadata
        if not (isinstance(offset, int) and isinstance(view_size, int)
                and offset >= 0 and view_size >= 0):
            raise pickle.UnpicklingError(f'a storage view of offset {offset!r} and size '
                                         f'{view_size!r}')
        return _Storage(pid[1].name, view_size, storages[root_key], offset)

    reader = _BoundedReader(file, budget.size, path)
    if _RestrictedUnpickler(reader, path).load() != LEGACY_MAGIC:
        raise errors.CorruptFileError(f'{path}: not a PyTorch checkpoint (wrong magic number)')
    protocol = _RestrictedUnpickler(reader, path).load()
    if protocol != LEGACY_PROTOCOL:
        raise errors.CorruptFileError(
            f'{path}: unsupported legacy protocol version {protocol!r}, expected 1001')
    sys_info = _RestrictedUnpickler(reader, path).load()
    byteorder = 'little' if sys_info.get('little_endian', True) else 'big'
    tree = _RestrictedUnpickler(reader, path, persistent_load).load()
    _locate_legacy_storages(file, reader, storages, path, budget)
    return tree, byteorder


def _tensor_geometry(ref, where, path):
    """Check a tensor's size, stride and offset: ints, as many strides as dimensions,
    none negative."""
    def ints(values):
        return isinstance(values, tuple) and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values)

    if not (ints(ref.size) and ints(ref.stride) and ints((ref.offset,))
            and len(ref.size) == len(ref.stride) <= MAX_NDIM):
        raise errors.CorruptFileError(
            f'{path}: tensor {where!r} has size {ref.size}, stride {ref.stride} and offset '
            f'{ref.offset!r}; expected as many strides as dimensions (at most {MAX_NDIM}), '
            'all of them ints >= 0')


def _element_type(ref, where, path):
    element_type = ref.element_type or ref.storage.element_type
    if element_type not in _ELEMENT_DTYPES:
        raise errors.CorruptFileError(f'{path}: tensor {where!r} has the unknown element '
                                      f'type {element_type!r}')
    return element_type


class _Resolver:
    """Turn each _TensorRef of an unpickled tree into an array, within the file's budget.

    Each object is resolved once (a pickle can reference one list from many places, and
    copying every path would grow exponentially with the depth); nesting deeper than
    ``MAX_DEPTH`` (or a cycle) is refused.
    """

    def __init__(self, path, budget, byteorder):
        self.path = path
        self.budget = budget
        self.byteorder = byteorder
        self.done = {}

    def resolve(self, obj, where='', depth=0):
        if not isinstance(obj, (_TensorRef, dict, list, tuple)):
            return obj
        if id(obj) in self.done:
            return self.done[id(obj)][1]
        if depth > MAX_DEPTH:
            shown = where if len(where) <= 60 else where[:60] + '...'
            raise errors.CorruptFileError(
                f'{self.path}: the checkpoint nests more than {MAX_DEPTH} levels deep (at '
                f'{shown!r}); a checkpoint nests a few levels (the file is corrupt, cyclic '
                'or hostile)')
        if isinstance(obj, _TensorRef):
            result = self.materialize(obj, where or 'the checkpoint')
        elif isinstance(obj, dict):
            result = type(obj)() if isinstance(obj, collections.OrderedDict) else {}
            for key, value in obj.items():
                result[key] = self.resolve(value, f'{where}/{key}' if where else str(key),
                                           depth + 1)
        else:
            result = type(obj)(self.resolve(value, f'{where}[{i}]', depth + 1)
                               for i, value in enumerate(obj))
        self.done[id(obj)] = (obj, result)
        return result

    def materialize(self, ref, where):
        """A C-contiguous copy of a tensor, after checking it fits its storage and the
        budget."""
        _tensor_geometry(ref, where, self.path)
        element_type = _element_type(ref, where, self.path)
        if not isinstance(ref.storage, _Storage):
            raise errors.CorruptFileError(f'{self.path}: tensor {where!r} has no storage')
        elements = ref.storage.elements(self.byteorder, where)
        if elements is None:
            raise errors.CorruptFileError(
                f'{self.path}: tensor {where!r} refers to a storage that is missing')
        if element_type != ref.storage.element_type:
            self.budget.spend(elements.nbytes, f'tensor {where!r} (as {element_type})')
            elements = _decode(elements.tobytes(), element_type, 'little')
        numel = math.prod(ref.size)
        if numel == 0:
            return numpy.empty(ref.size, dtype=elements.dtype)
        last = ref.offset + sum((n - 1) * s for n, s in zip(ref.size, ref.stride))
        if last >= len(elements):
            raise errors.CorruptFileError(
                f'{self.path}: tensor {where!r} of size {ref.size}, stride {ref.stride} and '
                f'offset {ref.offset} does not fit its storage of {len(elements)} elements')
        self.budget.spend(numel * elements.itemsize, f'tensor {where!r} of size {ref.size} '
                          f'and stride {ref.stride}')
        view = numpy.lib.stride_tricks.as_strided(
            elements[ref.offset:], shape=ref.size,
            strides=[s * elements.itemsize for s in ref.stride], writeable=False)
        return numpy.array(view, order='C')



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
        cvzoo.errors.CorruptFileError: the file is truncated or not a checkpoint, a
            storage or tensor does not fit the bytes the file holds for it, the arrays
            would exceed the file's expansion budget, or the tree nests deeper than
            ``MAX_DEPTH``; the message names the file and the tensor or storage.
    """
    path = os.fspath(path)
    budget = expansion_budget.ExpansionBudget(path)
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                tree, byteorder = _load_zip(archive, path, budget)
                return _Resolver(path, budget, byteorder).resolve(tree)
        with open(path, 'rb') as file:
            tree, byteorder = _load_legacy(file, path, budget)
            return _Resolver(path, budget, byteorder).resolve(tree)
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
