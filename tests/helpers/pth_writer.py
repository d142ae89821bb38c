"""Write PyTorch checkpoints (zip and legacy layouts) in pure Python, for the tests.

The pickle is emitted opcode by opcode (protocol 2), so globals such as
``torch._utils._rebuild_tensor_v2`` can be named without torch being importable.
"""

import io
import pickle
import struct
import zipfile

import numpy

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C

# element type -> (torch storage class, NumPy dtype of its bytes)
STORAGE_CLASSES = {
    'float64': ('DoubleStorage', 'f8'), 'float32': ('FloatStorage', 'f4'),
    'float16': ('HalfStorage', 'f2'), 'bfloat16': ('BFloat16Storage', 'u2'),
    'int64': ('LongStorage', 'i8'), 'int32': ('IntStorage', 'i4'),
    'uint8': ('ByteStorage', 'u1'), 'bool': ('BoolStorage', 'b1'),
}


class Global:
    """A module-level name, pickled with the GLOBAL opcode."""

    def __init__(self, module, name):
        self.module, self.name = module, name


class Reduce:
    """``func(*args)`` at unpickling time (REDUCE opcode)."""

    def __init__(self, func, args):
        self.func, self.args = func, tuple(args)


class Persistent:
    """A persistent id (BINPERSID opcode)."""

    def __init__(self, pid):
        self.pid = pid


class OrderedDictOf:
    """A collections.OrderedDict with the given items."""

    def __init__(self, items):
        self.items = dict(items)


class Tensor:
    """A tensor as a view (offset, size, stride) of a storage shared by key."""

    def __init__(self, key, storage, offset, size, stride, element_type='float32'):
        self.key, self.storage, self.element_type = key, storage, element_type
        self.offset, self.size, self.stride = offset, tuple(size), tuple(stride)


def tensor(key, array, element_type=None):
    """A C-contiguous tensor owning a storage holding ``array``."""
    array = numpy.asarray(array)
    stride = [int(s) // max(array.itemsize, 1) for s in array.copy(order="C").strides]
    element_type = element_type or str(array.dtype)
    return Tensor(key, array.ravel(), 0, array.shape, stride, element_type)


def _emit(obj, out, pid_of):
    """Append the pickle opcodes that rebuild ``obj`` to the bytearray ``out``."""
    if obj is None or obj is True or obj is False:
        out += {None: b'N', True: b'\x88', False: b'\x89'}[obj]
    elif isinstance(obj, int):
        data = obj.to_bytes((obj.bit_length() + 8) // 8, 'little', signed=True)
        out += b'\x8a' + bytes([len(data)]) + data
    elif isinstance(obj, float):
        out += b'G' + struct.pack('>d', obj)
    elif isinstance(obj, str):
        data = obj.encode()
        out += b'X' + struct.pack('<I', len(data)) + data
    elif isinstance(obj, (tuple, list, dict)):
        items = obj.items() if isinstance(obj, dict) else [(item,) for item in obj]
        out += b'('
        for item in items:
            for part in item:
                _emit(part, out, pid_of)
        out += {tuple: b't', list: b'l', dict: b'd'}[type(obj)]
    elif isinstance(obj, Global):
        out += f'c{obj.module}\n{obj.name}\n'.encode()
    elif isinstance(obj, Reduce):
        _emit(obj.func, out, pid_of)
        _emit(obj.args, out, pid_of)
        out += b'R'
    elif isinstance(obj, Persistent):
        _emit(obj.pid, out, pid_of)
        out += b'Q'
    elif isinstance(obj, OrderedDictOf):
        _emit(Reduce(Global('collections', 'OrderedDict'), ()), out, pid_of)
        out += b'('
        for key, value in obj.items.items():
            _emit(key, out, pid_of)
            _emit(value, out, pid_of)
        out += b'u'
    elif isinstance(obj, Tensor):
        _emit(_rebuild_call(obj, pid_of(obj)), out, pid_of)
    else:
        raise TypeError(f'cannot emit {type(obj).__name__}')


def _rebuild_call(obj, pid):
    hooks = Reduce(Global('collections', 'OrderedDict'), ())
    args = (Persistent(pid), obj.offset, obj.size, obj.stride, False, hooks)
    return Reduce(Global('torch._utils', '_rebuild_tensor_v2'), args)


def dumps(obj, pid_of=None):
    """Pickle ``obj`` (protocol 2) with the emitter; ``pid_of(tensor)`` gives persistent ids."""
    out = bytearray(b'\x80\x02')
    _emit(obj, out, pid_of)
    return bytes(out + b'.')


def _storage_bytes(tensor_, byteorder='little'):
    dtype = numpy.dtype(STORAGE_CLASSES[tensor_.element_type][1])
    dtype = dtype.newbyteorder('<' if byteorder == 'little' else '>')
    return numpy.asarray(tensor_.storage).astype(dtype).tobytes()


def write_zip(path, obj, tensors=(), archive='archive', byteorder='little', data_pkl=None,
              storage_chunks=None):
    """Write ``obj`` (built from the classes above) as a zip-format checkpoint.

    ``tensors`` lists every Tensor in ``obj`` (their storages are written once per key).
    ``data_pkl`` replaces the pickle bytes, and ``storage_chunks`` (key -> iterable of
    bytes) the bytes of storages, written deflated, for hostile-file tests.
    """
    storage_chunks = storage_chunks or {}

    def pid_of(tensor_):
        storage_class = STORAGE_CLASSES[tensor_.element_type][0]
        return ('storage', Global('torch', storage_class), tensor_.key, 'cpu',
                len(tensor_.storage))

    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as out:
        out.writestr(f'{archive}/data.pkl', data_pkl or dumps(obj, pid_of))
        out.writestr(f'{archive}/byteorder', byteorder)
        for tensor_ in {t.key: t for t in tensors}.values():
            if tensor_.key not in storage_chunks:
                out.writestr(f'{archive}/data/{tensor_.key}', _storage_bytes(tensor_, byteorder))
        out.writestr(f'{archive}/version', '3\n')
    # NOTE: level 1 deflates the large runs of zeros the tests write fastest.
    with zipfile.ZipFile(path, 'a', zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for key, chunks in storage_chunks.items():
            with out.open(f'{archive}/data/{key}', 'w', force_zip64=True) as member:
                for chunk in chunks:
                    member.write(chunk)


def zeros(n_byte, chunk=1 << 24):
    """``n_byte`` zero bytes as chunks, for ``storage_chunks`` (never all in memory)."""
    for start in range(0, n_byte, chunk):
        yield bytes(min(chunk, n_byte - start))


def write_state_dict(path, state, layout='zip'):
    """Write ``state`` (name -> array, in order) as a checkpoint of an OrderedDict of
    tensors, as ``torch.save(model.state_dict(), path)`` does; ``layout`` 'zip' (torch
    1.6 and later) or 'legacy'."""
    tensors = [tensor(str(i), array) for i, array in enumerate(state.values())]
    write = write_zip if layout == 'zip' else write_legacy
    write(path, OrderedDictOf(zip(state, tensors)), tensors)


def write_legacy(path, obj, tensors=(), views=None, numels=None):
    """Write ``obj`` as a legacy (pre-1.6) checkpoint.

    ``views`` maps a tensor key to ``(root_key, offset)``: that storage is then written
    as a view of the root storage, as the legacy format did for shared storages.
    ``numels`` maps a storage key to the element count written before its bytes (default:
    the true one), for hostile-file tests.
    """
    views = views or {}
    numels = numels or {}
    roots = {t.key: t for t in tensors if t.key not in views}

    def pid_of(tensor_):
        storage_class = Global('torch', STORAGE_CLASSES[tensor_.element_type][0])
        if tensor_.key in views:
            root_key, offset = views[tensor_.key]
            view = (tensor_.key, offset, len(tensor_.storage))
            return ('storage', storage_class, root_key, 'cpu', len(roots[root_key].storage), view)
        return ('storage', storage_class, tensor_.key, 'cpu', len(tensor_.storage), None)

    stream = io.BytesIO()
    for header in (LEGACY_MAGIC, 1001, {'protocol_version': 1001, 'little_endian': True}):
        stream.write(pickle.dumps(header, protocol=2))
    stream.write(dumps(obj, pid_of))
    stream.write(pickle.dumps(list(roots), protocol=2))
    for tensor_ in roots.values():
        numel = numels.get(tensor_.key, len(tensor_.storage))
        stream.write(struct.pack('<q', numel) + _storage_bytes(tensor_))
    with open(path, 'wb') as out:
        out.write(stream.getvalue())
