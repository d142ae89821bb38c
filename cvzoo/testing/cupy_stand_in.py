"""A strict stand-in for CuPy that runs on the CPU, to test cvzoo's GPU paths without a GPU.

``install()`` puts modules named ``cupy``, ``cupy.cuda``, ``cupy.cuda.nccl``,
``cupy.random``, ``cupy.linalg`` and ``cupyx`` into ``sys.modules``; cvzoo's backend then
imports them as it would import CuPy. Device arrays are NumPy arrays in a wrapper that
keeps CuPy's rules, so that code which breaks them fails here as it would on a GPU:

- no implicit device-to-host copy: ``numpy.asarray(device_array)`` raises TypeError;
- NumPy functions and ufuncs called on device arrays dispatch to this module
  (``__array_function__`` / ``__array_ufunc__``), as CuPy's do;
- a host array (``numpy.ndarray``) as an operand of a device operation raises TypeError;
  Python and NumPy scalars are allowed; host arrays may be indexes and assigned values;
- reductions return 0-d device arrays, not Python or NumPy scalars;
- each thread has a current device (0 at first), ``n_devices`` devices exist (2 by
  default), and an operation on an array of another device raises ValueError with
  CuPy's message; ``asarray``/``array``/``copy`` copy between devices, as peer copies do;
- host synchronisations are counted per call site (:func:`count_syncs`): ``bool``,
  ``int``, ``float``, ``item``, ``tolist``, ``get``, ``asnumpy``, iteration, ``repr``,
  boolean masks, ``nonzero``, ``unique`` and ``synchronize`` (of a device, a stream or an
  event: each is a host wait);
- streams and events keep CuPy's rules (``cupy.cuda.Stream``, ``Event``,
  ``get_current_stream``, ``get_elapsed_time``): a current stream per device and thread, a
  stream entered only with its own device current, an event recorded only on a stream of
  its device, and elapsed times only between recorded events the host has waited for;
- kernel launches are counted by kind (:func:`count_kernels`): each ufunc call or
  reduction, each other computing function or method, each ``ElementwiseKernel`` /
  ``ReductionKernel`` call, each copy (``copy``, ``astype`` to a new dtype, ``asarray`` of
  host data, a reshape that cannot be a view), each gather (``a[index_array]``) and each
  ``a[...] = b``; views (reshape, transpose, basic slicing) and ``empty`` launch nothing;
- ``ufunc.at`` / ``cupyx.scatter_add`` accept only the dtypes CUDA's atomicAdd has;
- ``ElementwiseKernel`` and ``ReductionKernel`` run the NumPy twin that
  ``cvzoo.core.backend.elementwise_kernel`` / ``reduction_kernel`` registered under the
  kernel's name (the CUDA source itself is never compiled here; a parameter named by a
  C++ keyword, which could not compile, is refused).

What it cannot prove: that a kernel's CUDA source compiles or is right, cuBLAS/cuDNN
numerics, the order of work between streams (everything runs at once here), asynchrony,
memory limits, or speed (see docs/gpu.md).

>>> was_installed = is_installed()
>>> cp = install()
>>> x = cp.arange(4, dtype=cp.float32)
>>> y = (x * 2).sum()
>>> type(y).__name__, y.shape
('ndarray', ())
>>> with count_syncs() as syncs:
...     float(y)
12.0
>>> sum(syncs.values())
1
>>> if not was_installed:
...     uninstall()
"""

import collections
import contextlib
import ctypes
import functools
import itertools
import os
import sys
import threading
import time
import types

import numpy

_THIS_FILE = os.path.normcase(os.path.abspath(__file__))
_NUMPY_DIR = os.path.normcase(os.path.dirname(numpy.__file__))

# dtypes CUDA's atomicAdd takes (cupyx.scatter_add, ufunc.at with integer indexes)
SCATTER_ADD_DTYPES = frozenset(numpy.dtype(t) for t in (
    numpy.float16, numpy.float32, numpy.float64, numpy.int32, numpy.uint32, numpy.uint64))

_config = {'n_devices': 2}
_thread = threading.local()


def _current_device():
    return getattr(_thread, 'device', 0)


class CUDARuntimeError(RuntimeError):
    """Raised for an invalid device ordinal, as cupy.cuda.runtime.CUDARuntimeError."""


# --- host synchronisations ------------------------------------------------------------

_sync_lock = threading.Lock()
_sync_counters = []  # the Counters of the count_syncs() blocks now open


def _call_site():
    frame = sys._getframe(2)
    while frame is not None:
        name = os.path.normcase(frame.f_code.co_filename)
        if name != _THIS_FILE and not name.startswith(_NUMPY_DIR):
            return f'{frame.f_code.co_filename}:{frame.f_lineno}'
        frame = frame.f_back
    return '?'


def _record_sync(kind):
    if not _sync_counters:
        return
    key = (kind, _call_site())
    with _sync_lock:
        for counter in _sync_counters:
            counter[key] += 1


@contextlib.contextmanager
def count_syncs():
    """Count the host synchronisations made inside the block, in every thread.

    Yields:
        collections.Counter: ``{(kind, 'file:line'): count}``, filled as the block runs.
    """
    counter = collections.Counter()
    with _sync_lock:
        _sync_counters.append(counter)
    try:
        yield counter
    finally:
        with _sync_lock:
            _sync_counters.remove(counter)


# --- kernel launches -------------------------------------------------------------------

_kernel_counters = []  # the Counters of the count_kernels() blocks now open


def _record_kernel(kind):
    if _kernel_counters:
        with _sync_lock:
            for counter in _kernel_counters:
                counter[kind] += 1


def _record_unless_view(kind, result, *sources):
    """Count a copy kernel when ``result`` (a NumPy array) is not a view of ``sources``."""
    if not _kernel_counters or not isinstance(result, numpy.ndarray) or result.size == 0:
        return
    if not any(isinstance(s, numpy.ndarray) and numpy.may_share_memory(result, s)
               for s in sources):
        _record_kernel(kind)


@contextlib.contextmanager
def count_kernels():
    """Count the kernel launches made inside the block, in every thread.

    What counts as a launch is listed in the module docstring.

    Yields:
        collections.Counter: ``{kind: count}`` (the ufunc, function or kernel name, or
        ``'copy'``, ``'gather'``, ``'setitem'``), filled as the block runs.
    """
    counter = collections.Counter()
    with _sync_lock:
        _kernel_counters.append(counter)
    try:
        yield counter
    finally:
        with _sync_lock:
            _kernel_counters.remove(counter)


# --- arrays ---------------------------------------------------------------------------

def _check_on_current(array, what):
    current = _current_device()
    if array._device != current:
        raise ValueError(
            f'Array device must be same as the current device: array device = '
            f'{array._device} while current = {current} (in {what})')


def _wrap(host_array, device=None):
    out = object.__new__(ndarray)
    out._a = host_array
    out._device = _current_device() if device is None else device
    return out


def _wrap_result(result, out=None):
    if out is not None:
        return out
    if isinstance(result, numpy.ndarray):
        return _wrap(result)
    if isinstance(result, numpy.generic):
        return _wrap(numpy.asarray(result))
    if isinstance(result, tuple):
        return tuple(_wrap_result(r) for r in result)
    if isinstance(result, list):
        return [_wrap_result(r) for r in result]
    return result


def _unwrap(value, what, allow_host=False):
    """The NumPy array inside a device array (checked to be on the current device).

    Host arrays raise TypeError unless ``allow_host``; lists and tuples are unwrapped
    element by element.
    """
    if isinstance(value, ndarray):
        _check_on_current(value, what)
        return value._a
    if isinstance(value, numpy.ndarray) and not allow_host:
        raise TypeError(f'Unsupported type {type(value)} (in {what}): host arrays are not '
                        'operands of device operations; send them with cupy.asarray first')
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, what, allow_host) for v in value)
    return value


def _unwrap_all(args, kwargs, what, allow_host=False):
    args = tuple(_unwrap(a, what, allow_host) for a in args)
    kwargs = {k: _unwrap(v, what, allow_host) for k, v in kwargs.items()}
    return args, kwargs


def _unwrap_index(key, what):
    """An index for __getitem__/__setitem__: device arrays unwrapped, host ones allowed."""
    parts = key if isinstance(key, tuple) else (key,)
    unwrapped = []
    for part in parts:
        if isinstance(part, ndarray):
            _check_on_current(part, what)
            if part.dtype == numpy.bool_:
                _record_sync('boolean mask')
            part = part._a
        elif isinstance(part, numpy.ndarray) and part.dtype == numpy.bool_:
            _record_sync('boolean mask')
        unwrapped.append(part)
    return tuple(unwrapped) if isinstance(key, tuple) else unwrapped[0]


class Device:
    """A fake CUDA device; a context manager that makes it current in this thread."""

    def __init__(self, device=None):
        if device is None:
            device = _current_device()
        device = int(device)
        if not 0 <= device < _config['n_devices']:
            raise CUDARuntimeError(
                f'cudaErrorInvalidDevice: invalid device ordinal {device} '
                f"(the stand-in has {_config['n_devices']} devices)")
        self.id = device
        self._previous = []

    def use(self):
        """Make this device current in this thread."""
        _thread.device = self.id

    def __enter__(self):
        self._previous.append(_current_device())
        self.use()
        return self

    def __exit__(self, *exc_info):
        _thread.device = self._previous.pop()
        return False

    def synchronize(self):
        """Wait for the device (counted as a host synchronisation)."""
        _record_sync('synchronize')
        _note_wait(('device', self.id))

    @property
    def compute_capability(self):
        return '90'

    @property
    def mem_info(self):
        return (64 << 30, 80 << 30)

    def __int__(self):
        return self.id

    def __index__(self):
        return self.id

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(('cuda', self.id))

    def __repr__(self):
        return f'<CUDA Device {self.id}>'


class _MemoryPointer:
    """``array.data``: ``ptr`` is the real host address of the stand-in's memory."""

    def __init__(self, array):
        self.ptr = array._a.__array_interface__['data'][0]
        self.device = Device(array._device)
        self.device_id = array._device


# methods whose array arguments are operands; the others take axes, shapes or dtypes,
# which may come as host arrays
_OPERAND_METHODS = frozenset(('dot', 'take', 'put', 'choose', 'clip', 'compress'))


# methods and functions that return views when they can (a kernel only when they copy)
_VIEW_NAMES = frozenset((
    'reshape', 'transpose', 'ravel', 'squeeze', 'swapaxes', 'view', 'diagonal', 'moveaxis',
    'rollaxis', 'expand_dims', 'broadcast_to', 'broadcast_arrays', 'atleast_1d',
    'atleast_2d', 'atleast_3d', 'split', 'array_split', 'real', 'imag', 'flip', 'fliplr',
    'flipud', 'astype'))
# functions that launch nothing: allocation without filling, and queries
_NO_KERNEL_NAMES = frozenset((
    'empty', 'empty_like', 'shares_memory', 'may_share_memory', 'result_type',
    'iscomplexobj', 'isrealobj'))


def _record_call(name, result, source):
    """Count the kernel that function or method ``name`` launched to give ``result``."""
    if not _kernel_counters or name in _NO_KERNEL_NAMES:
        return
    if name in _VIEW_NAMES:
        results = result if isinstance(result, (tuple, list)) else (result,)
        for r in results:
            _record_unless_view('copy', r, source)
    else:
        _record_kernel(name)


def _method(name, sync=None):
    allow_host = name not in _OPERAND_METHODS

    def method(self, *args, **kwargs):
        _check_on_current(self, f'ndarray.{name}')
        if sync:
            _record_sync(sync)
        out = kwargs.get('out')
        args, kwargs = _unwrap_all(args, kwargs, f'ndarray.{name}', allow_host)
        result = getattr(self._a, name)(*args, **kwargs)
        _record_call(name, result, self._a)
        return _wrap_result(result, out if isinstance(out, ndarray) else None)
    method.__name__ = name
    return method


def _defers(self, other):
    """Whether ``other`` takes the operator over, as CuPy lets a type of higher
    ``__array_priority__`` (a Variable, say) do."""
    if isinstance(other, (ndarray, numpy.ndarray, numpy.generic, int, float, complex, bool)):
        return False
    return (isinstance(other, (list, tuple))
            or getattr(other, '__array_ufunc__', 0) is None
            or getattr(other, '__array_priority__', 0.0) > self.__array_priority__)


def _binary(ufunc, reflected=False):
    def operator(self, other):
        if _defers(self, other):
            return NotImplemented
        inputs = (other, self) if reflected else (self, other)
        return _ufunc_call(ufunc, '__call__', inputs, {})
    return operator


def _inplace(ufunc):
    def operator(self, other):
        _ufunc_call(ufunc, '__call__', (self, other), {'out': (self,)})
        return self
    return operator


def _unary(ufunc):
    def operator(self):
        return _ufunc_call(ufunc, '__call__', (self,), {})
    return operator


def _sync_conversion(kind, convert):
    def method(self, *args):
        _record_sync(kind)
        return convert(self._a, *args)
    method.__name__ = kind
    return method


class ndarray:  # noqa: N801 - CuPy's name
    """A device array of the stand-in: a NumPy array held on a fake device."""

    __slots__ = ('_a', '_device', '__weakref__')
    __array_priority__ = 100.0
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order='C'):
        self._a = numpy.empty(shape, dtype, order=order)
        self._device = _current_device()

    # attributes that read no data
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    device = property(lambda self: Device(self._device))
    data = property(lambda self: _MemoryPointer(self))
    T = property(lambda self: self.transpose())

    @property
    def base(self):
        return None if self._a.base is None else _wrap(self._a.base, self._device)

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError('len() of unsized object')
        return len(self._a)

    # no implicit host conversion
    def __array__(self, dtype=None, copy=None):
        raise TypeError('Implicit conversion to a NumPy array is not allowed. '
                        'Please use `.get()` to construct a NumPy array explicitly.')

    # explicit host conversions, each a synchronisation
    __bool__ = _sync_conversion('bool', lambda a: bool(a))
    __int__ = _sync_conversion('int', lambda a: int(a))
    __float__ = _sync_conversion('float', lambda a: float(a))
    __complex__ = _sync_conversion('complex', lambda a: complex(a))
    __index__ = _sync_conversion('int', lambda a: a.__index__())
    item = _sync_conversion('item', lambda a, *args: a.item(*args))
    tolist = _sync_conversion('tolist', lambda a: a.tolist())

    def get(self, stream=None, order='C', out=None, blocking=True):
        """Copy to the host (a synchronisation)."""
        _record_sync('get')
        if out is not None:
            out[...] = self._a
            return out
        return numpy.array(self._a, order=order)

    def set(self, arr, stream=None):
        """Copy host array ``arr`` into this array."""
        if not isinstance(arr, numpy.ndarray):
            raise TypeError(f'Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}')
        if arr.shape != self._a.shape:
            raise ValueError(f'Shape mismatch: {arr.shape} vs {self._a.shape}')
        self._a[...] = arr

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError('iteration over a 0-d array')
        _record_sync('iteration')
        return (self[i] for i in range(len(self._a)))

    def __repr__(self):
        _record_sync('repr')
        return repr(self._a)

    def __str__(self):
        _record_sync('repr')
        return str(self._a)

    def __format__(self, spec):
        _record_sync('repr')
        return format(self._a if self._a.ndim else self._a.item(), spec)

    # indexing
    def __getitem__(self, key):
        _check_on_current(self, 'ndarray.__getitem__')
        result = self._a[_unwrap_index(key, 'ndarray.__getitem__')]
        _record_unless_view('gather', result, self._a)
        return _wrap(result)

    def __setitem__(self, key, value):
        _check_on_current(self, 'ndarray.__setitem__')
        key = _unwrap_index(key, 'ndarray.__setitem__')
        _record_kernel('setitem')
        self._a[key] = _unwrap(value, 'ndarray.__setitem__', allow_host=True)

    # copies between devices are allowed, as CuPy's peer copies
    def copy(self, order='C'):
        _record_kernel('copy')
        return _wrap(self._a.copy(order=order))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        _record_kernel('copy')
        return _wrap(self._a.copy(), self._device)

    def __reduce__(self):
        _record_sync('get')
        return _rebuild, (self._a.copy(), self._device)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _ufunc_call(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        implementation = _FUNCTIONS.get(func.__name__)
        if implementation is None:
            return NotImplemented
        return implementation(*args, **kwargs)

    def __dlpack__(self, *args, **kwargs):
        raise TypeError('the CuPy stand-in does not export DLPack')


def _rebuild(host_array, device):
    return _wrap(host_array, device)


for _name in ('reshape', 'transpose', 'ravel', 'flatten', 'squeeze', 'swapaxes', 'view',
              'astype', 'fill', 'sum', 'mean', 'var', 'std', 'prod', 'max', 'min',
              'argmax', 'argmin', 'any', 'all', 'cumsum', 'clip', 'dot', 'take', 'repeat',
              'round', 'sort', 'argsort', 'conj', 'diagonal', 'trace', 'put', 'partition',
              'argpartition', 'choose'):
    setattr(ndarray, _name, _method(_name))
ndarray.nonzero = _method('nonzero', sync='nonzero')
ndarray.compress = _method('compress', sync='compress')

for _name, _ufunc in (('add', numpy.add), ('sub', numpy.subtract), ('mul', numpy.multiply),
                      ('truediv', numpy.true_divide), ('floordiv', numpy.floor_divide),
                      ('mod', numpy.remainder), ('pow', numpy.power),
                      ('matmul', numpy.matmul), ('and', numpy.bitwise_and),
                      ('or', numpy.bitwise_or), ('xor', numpy.bitwise_xor),
                      ('lshift', numpy.left_shift), ('rshift', numpy.right_shift)):
    setattr(ndarray, f'__{_name}__', _binary(_ufunc))
    setattr(ndarray, f'__r{_name}__', _binary(_ufunc, reflected=True))
    setattr(ndarray, f'__i{_name}__', _inplace(_ufunc))
for _name, _ufunc in (('lt', numpy.less), ('le', numpy.less_equal), ('gt', numpy.greater),
                      ('ge', numpy.greater_equal), ('eq', numpy.equal),
                      ('ne', numpy.not_equal)):
    setattr(ndarray, f'__{_name}__', _binary(_ufunc))
for _name, _ufunc in (('neg', numpy.negative), ('pos', numpy.positive),
                      ('abs', numpy.absolute), ('invert', numpy.invert)):
    setattr(ndarray, f'__{_name}__', _unary(_ufunc))


def _ufunc_call(ufunc, method, inputs, kwargs):
    what = f'{ufunc.__name__}.{method}' if method != '__call__' else ufunc.__name__
    for x in inputs:
        if isinstance(x, (list, tuple)) and method != 'at':
            raise TypeError(f'Unsupported type {type(x)} (in {what})')
    out = kwargs.get('out')
    if method == 'at':
        target, indices = inputs[0], inputs[1]
        dtype = numpy.dtype(target.dtype)
        if ufunc is numpy.add and dtype not in SCATTER_ADD_DTYPES:
            raise TypeError(f'{what}: dtype {dtype} is not supported by atomicAdd '
                            f'(supported: {sorted(str(d) for d in SCATTER_ADD_DTYPES)})')
        _unwrap(target, what)
        numpy_inputs = (target._a, _unwrap_index(indices, what)) + tuple(
            _unwrap(x, what) for x in inputs[2:])
        getattr(ufunc, method)(*numpy_inputs)
        _record_kernel(what)
        return None
    _record_kernel(what)
    numpy_inputs = tuple(_unwrap(x, what) for x in inputs)
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        kwargs = dict(kwargs, out=tuple(_unwrap(o, what) for o in outs))
        result = getattr(ufunc, method)(*numpy_inputs, **kwargs)
        return outs[0] if len(outs) == 1 else outs
    result = getattr(ufunc, method)(*numpy_inputs, **kwargs)
    if ufunc is numpy.matmul:
        result = _matmul_dtype_as_cupy(result, numpy_inputs)
    return _wrap_result(result)


def _matmul_dtype_as_cupy(result, inputs):
    """NumPy's matmul of two bfloat16 arrays (ml_dtypes) returns float32; CuPy's returns
    bfloat16 (computed with float32 accumulation by cuBLAS), as for float16."""
    dtypes = {numpy.dtype(x.dtype) for x in inputs}
    if len(dtypes) == 1 and dtypes.pop().name == 'bfloat16' and result.dtype.name != 'bfloat16':
        return result.astype(inputs[0].dtype)
    return result


# --- module functions ------------------------------------------------------------------

_FUNCTIONS = {}


# functions whose arguments after the first are axes or shapes, which may be host arrays
_SHAPE_FUNCTIONS = frozenset((
    'reshape', 'transpose', 'moveaxis', 'rollaxis', 'swapaxes', 'squeeze', 'expand_dims',
    'broadcast_to', 'tile', 'pad', 'split', 'array_split', 'roll', 'flip', 'sum', 'mean',
    'max', 'min', 'amax', 'amin', 'prod', 'any', 'all', 'var', 'std'))


def _function(name, sync=None, numpy_function=None):
    numpy_function = numpy_function or getattr(numpy, name)
    shape_function = name in _SHAPE_FUNCTIONS

    def function(*args, **kwargs):
        if sync:
            _record_sync(sync)
        out = kwargs.get('out')
        if shape_function and args:
            rest, kwargs = _unwrap_all(args[1:], kwargs, name, allow_host=True)
            args = (_unwrap(args[0], name),) + rest
        else:
            args, kwargs = _unwrap_all(args, kwargs, name)
        result = numpy_function(*args, **kwargs)
        _record_call(name, result, args[0] if args else None)
        return _wrap_result(result, out if isinstance(out, ndarray) else None)
    function.__name__ = name
    return function


_ARRAY_FUNCTIONS = (
    # creation from shapes or other device arrays
    'empty', 'zeros', 'ones', 'full', 'empty_like', 'zeros_like', 'ones_like', 'full_like',
    'arange', 'linspace', 'eye', 'identity', 'tri', 'tril', 'triu', 'diag', 'meshgrid',
    'indices',
    # shapes and joins
    'reshape', 'ravel', 'transpose', 'moveaxis', 'rollaxis', 'swapaxes', 'squeeze',
    'expand_dims', 'broadcast_to', 'broadcast_arrays', 'atleast_1d', 'atleast_2d',
    'atleast_3d', 'concatenate', 'stack', 'vstack', 'hstack', 'dstack', 'split',
    'array_split', 'tile', 'repeat', 'flip', 'fliplr', 'flipud', 'roll', 'pad', 'copyto',
    'take', 'take_along_axis', 'put', 'put_along_axis', 'choose', 'where', 'select',
    'diagonal', 'trace', 'searchsorted', 'digitize', 'bincount', 'histogram',
    'ravel_multi_index', 'unravel_index',
    # reductions and sorting
    'sum', 'prod', 'mean', 'var', 'std', 'max', 'min', 'amax', 'amin', 'argmax',
    'argmin', 'any', 'all', 'cumsum', 'cumprod', 'sort', 'argsort', 'lexsort',
    'partition', 'argpartition', 'count_nonzero', 'median', 'percentile', 'quantile',
    'nanmax', 'nanmin', 'nansum', 'nanmean', 'average', 'ptp',
    # products
    'dot', 'vdot', 'inner', 'outer', 'tensordot', 'einsum', 'kron', 'cross',
    # elementwise helpers that are not ufuncs
    'clip', 'round', 'around', 'isclose', 'nan_to_num', 'real', 'imag', 'angle',
    'shares_memory', 'may_share_memory', 'result_type', 'iscomplexobj', 'isrealobj',
)
for _name in _ARRAY_FUNCTIONS:
    _FUNCTIONS[_name] = _function(_name)
for _name in ('nonzero', 'flatnonzero', 'argwhere', 'unique', 'compress', 'extract'):
    _FUNCTIONS[_name] = _function(_name, sync=_name)
_where_of_three = _FUNCTIONS['where']


def where(condition, *values):
    """``where(c, x, y)`` chooses on the device; ``where(c)`` is ``nonzero`` (a sync)."""
    if not values:
        _record_sync('nonzero')
    return _where_of_three(condition, *values)


_FUNCTIONS['where'] = where
for _name in ('array_equal', 'array_equiv', 'allclose'):
    _FUNCTIONS[_name] = _function(
        _name, numpy_function=lambda *a, _f=getattr(numpy, _name), **k: numpy.asarray(_f(*a, **k)))


def _to_current(value, dtype=None, copy=True, order='K'):
    """``cupy.array``: a copy on the current device of a host or device array."""
    if isinstance(value, ndarray):
        host = value._a
    elif isinstance(value, (list, tuple)):
        host = numpy.array(_unwrap(value, 'array', allow_host=True), dtype=dtype)
    else:
        host = value
    _record_kernel('copy')
    return _wrap(numpy.array(host, dtype=dtype, copy=True, order=order))


def array(obj, dtype=None, copy=True, order='K', subok=False, ndmin=0, blocking=False):
    """Copy ``obj`` (host data, or a device array of any device) to the current device."""
    out = _to_current(obj, dtype, order=order)
    if ndmin > out.ndim:
        out = _wrap(out._a.reshape((1,) * (ndmin - out.ndim) + out.shape))
    return out


def asarray(a, dtype=None, order=None, blocking=False):
    """``a`` itself when it is a device array of the current device with that dtype."""
    if (isinstance(a, ndarray) and a._device == _current_device()
            and (dtype is None or numpy.dtype(dtype) == a.dtype)):
        return a
    return _to_current(a, dtype, order=order or 'K')


def ascontiguousarray(a, dtype=None):
    """A C-contiguous device array (``a`` itself when it already is one)."""
    a = asarray(a, dtype)
    if a._a.flags.c_contiguous:
        return a
    _record_kernel('copy')
    return _wrap(numpy.ascontiguousarray(a._a))


def copy(a, order='K'):
    """A copy of ``a`` on the current device."""
    return _to_current(a, order=order)


def asnumpy(a, stream=None, order='C', out=None, blocking=True):
    """Copy to the host (a synchronisation for device arrays)."""
    if isinstance(a, ndarray):
        return a.get(order=order, out=out)
    return numpy.asarray(a, order=order)


def get_array_module(*args):
    """This module when any argument is a device array, numpy otherwise."""
    for x in args:
        if isinstance(x, ndarray) or isinstance(getattr(x, 'array', None), ndarray):
            return sys.modules['cupy']
    return numpy


def as_strided(x, shape=None, strides=None):
    """``cupy.lib.stride_tricks.as_strided``: a strided view of a device array."""
    return _wrap(numpy.lib.stride_tricks.as_strided(_unwrap(x, 'as_strided'), shape, strides))


def scatter_add(a, slices, value):
    """``cupyx.scatter_add``: numpy.add.at with CUDA's atomicAdd dtypes."""
    _ufunc_call(numpy.add, 'at', (a, slices, value), {})


# --- kernels ---------------------------------------------------------------------------

# C++ keywords: a kernel parameter of one of these names does not compile on a GPU
_CPP_KEYWORDS = frozenset((
    'auto', 'bool', 'break', 'case', 'catch', 'char', 'class', 'const', 'continue',
    'default', 'delete', 'do', 'double', 'else', 'enum', 'explicit', 'extern', 'false',
    'float', 'for', 'friend', 'goto', 'if', 'inline', 'int', 'long', 'mutable', 'namespace',
    'new', 'operator', 'private', 'protected', 'public', 'register', 'return', 'short',
    'signed', 'sizeof', 'static', 'struct', 'switch', 'template', 'this', 'throw', 'true',
    'try', 'typedef', 'typename', 'union', 'unsigned', 'using', 'virtual', 'void',
    'volatile', 'while'))


def _parse_params(text):
    params = []
    for part in filter(None, (p.strip() for p in text.split(','))):
        words = part.split()
        if len(words) < 2:
            raise ValueError(f'ElementwiseKernel: bad parameter {part!r}')
        if words[-1] in _CPP_KEYWORDS:
            raise ValueError(f'ElementwiseKernel: parameter {part!r} is named by a C++ '
                             'keyword; the kernel would not compile')
        params.append(words[-1])
    return params


class ElementwiseKernel:
    """Checks its signature and runs the NumPy twin registered under its name."""

    def __init__(self, in_params, out_params, operation, name='kernel', **options):
        self.in_params = _parse_params(in_params)
        self.out_params = _parse_params(out_params)
        if not self.out_params:
            raise ValueError(f'ElementwiseKernel {name}: no output parameter')
        if not operation.strip():
            raise ValueError(f'ElementwiseKernel {name}: empty operation')
        self.operation = operation
        self.name = name

    def __call__(self, *args, size=None, **kwargs):
        from cvzoo.core import backend

        twin = backend.numpy_twin_of(self.name)
        n_in = len(self.in_params)
        if len(args) not in (n_in, n_in + len(self.out_params)):
            raise TypeError(f'{self.name}: expected {n_in} inputs (and optionally '
                            f'{len(self.out_params)} outputs), got {len(args)} arguments')
        host = [_unwrap(a, self.name) for a in args]
        _record_kernel(self.name)
        if len(args) > n_in:
            # outputs given: CuPy reads and writes them in place, so does the twin
            twin(*host)
            outs = args[n_in:]
            return outs[0] if len(outs) == 1 else tuple(outs)
        results = twin(*host)
        results = results if isinstance(results, tuple) else (results,)
        wrapped = tuple(_wrap(numpy.asarray(r)) for r in results)
        return wrapped[0] if len(wrapped) == 1 else wrapped


class ReductionKernel:
    """Checks its signature and runs the NumPy twin registered under its name."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr,
                 identity, name='reduce_kernel', reduce_type=None, **options):
        self.in_params = _parse_params(in_params)
        self.out_params = _parse_params(out_params)
        if len(self.out_params) != 1:
            raise ValueError(f'ReductionKernel {name}: needs exactly one output parameter')
        for what, text in (('map_expr', map_expr), ('reduce_expr', reduce_expr),
                           ('post_map_expr', post_map_expr), ('identity', identity)):
            if not str(text).strip():
                raise ValueError(f'ReductionKernel {name}: empty {what}')
        self.name = name

    def __call__(self, *args, axis=None, keepdims=False, **kwargs):
        from cvzoo.core import backend

        if len(args) != len(self.in_params):
            raise TypeError(f'{self.name}: expected {len(self.in_params)} inputs, got '
                            f'{len(args)}')
        host = [_unwrap(a, self.name) for a in args]
        _record_kernel(self.name)
        twin = backend.numpy_twin_of(self.name)
        return _wrap(numpy.asarray(twin(*host, axis=axis, keepdims=keepdims)))


# --- cupy.cuda -------------------------------------------------------------------------

# The stand-in runs every operation at once, on the host, so no stream ever has work
# pending. It keeps CuPy's rules all the same: each thread has a current stream per device
# (the null stream at first); a stream is entered or used only while its own device is
# current; an event is recorded only on a stream of the device it was made on; and
# get_elapsed_time() needs both events recorded and the host to have waited for them
# (Event.synchronize(), or a synchronize of their stream or device), as on a GPU that may
# not have reached them yet (cudaErrorNotReady).

_handles = itertools.count(1)  # the ptr of each new stream and event
_waits_lock = threading.Lock()
_waits = collections.Counter()  # host waits per ('stream', device, ptr) and ('device', device)


def _note_wait(key):
    with _waits_lock:
        _waits[key] += 1


def _thread_streams():
    """{device: [streams entered or used]} and the devices of the open ``with`` blocks."""
    streams = getattr(_thread, 'streams', None)
    if streams is None:
        streams = _thread.streams = ({}, [])
    return streams


def get_current_stream(device_id=-1):
    """The current stream of device ``device_id`` (default: the current device) here."""
    device = _current_device() if device_id == -1 else int(device_id)
    stack = _thread_streams()[0].get(device)
    return stack[-1] if stack else Stream.null


class Stream:
    """``cupy.cuda.Stream``: the null stream (``Stream.null``) or a new one of the current
    device; ``with stream:`` makes it current for its device in this thread."""

    null = None  # the null stream, set below

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        if null or ptds:
            self.ptr, self.device_id = 0, -1  # the default stream of whichever device is current
        else:
            self.ptr, self.device_id = next(_handles), _current_device()
        self.is_non_blocking = bool(non_blocking) and not (null or ptds)
        self.priority = priority or 0

    def _device(self):
        """The device this stream queues work on (checked to be the current one)."""
        current = _current_device()
        if self.device_id not in (-1, current):
            raise RuntimeError(f'The device that the stream is created on ({self.device_id}) '
                               f'does not match with the current device ({current})')
        return current

    def __enter__(self):
        device = self._device()
        stacks, entered = _thread_streams()
        stacks.setdefault(device, []).append(self)
        entered.append(device)
        return self

    def __exit__(self, *exc_info):
        stacks, entered = _thread_streams()
        stacks[entered.pop()].pop()
        return False

    def use(self):
        """Make this stream current for its device (until another is used or entered)."""
        stack = _thread_streams()[0].setdefault(self._device(), [])
        if stack:
            stack[-1] = self
        else:
            stack.append(self)
        return self

    def synchronize(self):
        """Wait for the stream (counted as a host synchronisation)."""
        _record_sync('synchronize')
        device = _current_device() if self.device_id == -1 else self.device_id
        _note_wait(('stream', device, self.ptr))

    def record(self, event=None):
        """Record ``event`` (a new one when None) on this stream; return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        """Make later work of this stream wait for ``event`` (nothing runs late here)."""

    @property
    def done(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return self.ptr

    def __repr__(self):
        return f'<Stream {self.ptr} (device {self.device_id})>'


Stream.null = Stream(null=True)


class Event:
    """``cupy.cuda.Event``, made on the current device; times are host clock readings."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        if interprocess and not disable_timing:
            raise ValueError('Timing must be disabled for interprocess events')
        self.ptr = next(_handles)
        self._device_id = _current_device()
        self._disable_timing = disable_timing
        self._recorded = None  # (stream key, waits on it and on its device then, order, time)
        self._waited = False

    def record(self, stream=None):
        """Record the event on ``stream`` (default: the current stream)."""
        stream = get_current_stream() if stream is None else stream
        device = stream._device()
        if device != self._device_id:
            raise CUDARuntimeError(
                f'cudaErrorInvalidResourceHandle: an event of device {self._device_id} '
                f'recorded on a stream of device {device}')
        key = ('stream', device, stream.ptr)
        with _waits_lock:
            self._recorded = (key, _waits[key], _waits[('device', device)], next(_handles),
                              time.perf_counter())
        self._waited = False

    def synchronize(self):
        """Wait for the event (counted as a host synchronisation)."""
        _record_sync('synchronize')
        self._waited = self._recorded is not None

    @property
    def done(self):
        self._waited = self._recorded is not None  # the caller has now seen it complete
        return True

    def _complete(self):
        """Whether the host has waited for this event since it was recorded."""
        if self._recorded is None:
            return False
        key, stream_waits, device_waits = self._recorded[:3]
        with _waits_lock:
            return (self._waited or _waits[key] > stream_waits
                    or _waits[('device', key[1])] > device_waits)


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events the host has waited for (float)."""
    for name, event in (('start_event', start_event), ('end_event', end_event)):
        if event._recorded is None or event._disable_timing:
            raise CUDARuntimeError(f'cudaErrorInvalidResourceHandle: {name} was never recorded '
                                   'or was made with disable_timing=True')
    start, end = start_event._recorded, end_event._recorded
    start_done = start_event._complete() or (start[0] == end[0] and start[3] < end[3])
    if not (end_event._complete() and start_done):
        raise CUDARuntimeError('cudaErrorNotReady: the host has not waited for the events; '
                               'call end_event.synchronize() first')
    return (end[4] - start[4]) * 1000.0


class _MemoryPool:
    def malloc(self, size):
        raise RuntimeError('the CuPy stand-in allocates through NumPy')

    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        pass

    def set_limit(self, size=None, fraction=None):
        pass


_MEMORY_POOL = _MemoryPool()
_PINNED_POOL = _MemoryPool()


def _make_cuda_module(name):
    cuda = types.ModuleType(name)
    runtime = types.ModuleType(f'{name}.runtime')
    runtime.CUDARuntimeError = CUDARuntimeError
    runtime.getDeviceCount = lambda: _config['n_devices']
    runtime.getDevice = _current_device
    runtime.setDevice = lambda i: Device(i).use()
    runtime.deviceSynchronize = lambda: Device().synchronize()
    cuda.runtime = runtime
    cuda.Device = Device
    cuda.Stream = Stream
    cuda.Event = Event
    cuda.get_current_stream = get_current_stream
    cuda.get_elapsed_time = get_elapsed_time
    cuda.get_device_id = _current_device
    cuda.set_allocator = lambda allocator=None: None
    cuda.set_pinned_memory_allocator = lambda allocator=None: None
    cuda.get_default_memory_pool = lambda: _MEMORY_POOL
    cuda.get_default_pinned_memory_pool = lambda: _PINNED_POOL
    cuda.is_available = lambda: True
    cuda.cudnn_enabled = False
    return cuda, runtime


# --- cupy.cuda.nccl over MPI -------------------------------------------------------------

def _make_nccl_module(name):
    """NCCL's calls over mpi4py, on the real host addresses behind ``array.data.ptr``."""
    nccl = types.ModuleType(name)
    dtypes = {'NCCL_FLOAT16': numpy.float16, 'NCCL_FLOAT32': numpy.float32,
              'NCCL_FLOAT64': numpy.float64, 'NCCL_INT32': numpy.int32,
              'NCCL_INT64': numpy.int64}
    for code, (key, _) in enumerate(dtypes.items()):
        setattr(nccl, key, code)
    nccl.NCCL_SUM = 0
    code_to_dtype = {code: numpy.dtype(t) for code, t in enumerate(dtypes.values())}

    def view(ptr, count, code):
        dtype = code_to_dtype[code]
        buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
        return numpy.frombuffer(buffer, dtype=dtype, count=count)

    class NcclCommunicator:
        """Records the device current at its creation; every call must run on it."""

        def __init__(self, ndev, comm_id, rank):
            from mpi4py import MPI

            self.device_id = _current_device()
            self.size, self.rank = ndev, rank
            self._mpi = MPI.COMM_WORLD
            devices = self._mpi.allgather((os.uname().nodename, self.device_id))
            if len(set(devices)) != len(devices):
                raise RuntimeError(f'ncclInvalidUsage: duplicate GPU on one node: {devices}')

        def _check_device(self):
            if _current_device() != self.device_id:
                raise RuntimeError(f'NCCL communicator of device {self.device_id} used while '
                                   f'device {_current_device()} is current')

        def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):  # noqa: N802
            self._check_device()
            from mpi4py import MPI

            send = view(sendbuf, count, datatype).copy()
            if send.dtype == numpy.float16:
                # many MPI builds have no half-precision type: sum in float16 as NCCL does
                parts = self._mpi.allgather(send)
                view(recvbuf, count, datatype)[...] = functools.reduce(numpy.add, parts)
                return
            self._mpi.Allreduce(send, view(recvbuf, count, datatype), op=MPI.SUM)

        def bcast(self, buff, count, datatype, root, stream):
            self._check_device()
            self._mpi.Bcast(view(buff, count, datatype), root=root)

        def destroy(self):
            pass

    nccl.NcclCommunicator = NcclCommunicator
    nccl.get_unique_id = lambda: (0,) * 128
    nccl.get_version = lambda: 22000
    return nccl


# --- cupy.random -----------------------------------------------------------------------

class RandomState:
    """cupy.random.RandomState: numbers drawn on the host, returned on the current device."""

    def __init__(self, seed=None):
        self._rs = numpy.random.RandomState(seed)

    def seed(self, seed=None):
        self._rs.seed(seed)

    def _draw(self, name, *args, dtype=None, **kwargs):
        args, kwargs = _unwrap_all(args, kwargs, f'random.{name}')
        out = numpy.asarray(getattr(self._rs, name)(*args, **kwargs))
        return _wrap(out.astype(dtype) if dtype is not None else out)

    def __getattr__(self, name):
        if name in ('rand', 'randn', 'random_sample', 'uniform', 'normal', 'randint',
                    'permutation', 'choice', 'standard_normal', 'binomial', 'beta', 'gamma',
                    'exponential', 'poisson', 'random', 'shuffle'):
            return lambda *args, **kwargs: self._draw(name, *args, **kwargs)
        raise AttributeError(name)


def _make_random_module(name):
    random = types.ModuleType(name)
    states = {}

    def get_random_state():
        return states.setdefault(_current_device(), RandomState())

    def seed(value=None):
        get_random_state().seed(value)

    random.RandomState = RandomState
    random.get_random_state = get_random_state
    random.seed = seed
    for draw in ('rand', 'randn', 'random_sample', 'uniform', 'normal', 'randint',
                 'permutation', 'choice', 'standard_normal', 'random', 'binomial'):
        setattr(random, draw,
                lambda *args, _d=draw, **kwargs: getattr(get_random_state(), _d)(*args, **kwargs))
    random.shuffle = lambda a: a.__setitem__(Ellipsis, a[get_random_state().permutation(len(a))])
    return random


# --- the module ------------------------------------------------------------------------

_MODULE_NAMES = ('cupy', 'cupy.cuda', 'cupy.cuda.runtime', 'cupy.cuda.nccl', 'cupy.random',
                 'cupy.linalg', 'cupyx')


def _make_module():
    cupy = types.ModuleType('cupy')
    cupy.__doc__ = 'A strict CPU stand-in for CuPy (cvzoo.testing.cupy_stand_in).'
    cupy.__version__ = '13.0.0-stand-in'
    cupy.is_stand_in = True
    for name in dir(numpy):
        value = getattr(numpy, name)
        if isinstance(value, type) and issubclass(value, numpy.generic) or name in (
                'dtype', 'newaxis', 'pi', 'e', 'inf', 'nan', 'iinfo', 'finfo', 'can_cast',
                'promote_types', 'issubdtype', 'ndim', 'shape', 'size', 'isscalar',
                'float_', 'bool_'):
            setattr(cupy, name, value)
    for name in dir(numpy):
        value = getattr(numpy, name)
        if isinstance(value, numpy.ufunc):
            setattr(cupy, name, value)  # dispatches to ndarray.__array_ufunc__
    for name, function in _FUNCTIONS.items():
        setattr(cupy, name, function)
    cupy.ndarray = ndarray
    cupy.array, cupy.asarray, cupy.asanyarray = array, asarray, asarray
    cupy.ascontiguousarray, cupy.copy, cupy.asnumpy = ascontiguousarray, copy, asnumpy
    cupy.get_array_module = get_array_module
    cupy.get_default_memory_pool = lambda: _MEMORY_POOL
    cupy.get_default_pinned_memory_pool = lambda: _PINNED_POOL
    cupy.ElementwiseKernel = ElementwiseKernel
    cupy.ReductionKernel = ReductionKernel
    cupy.cuda, runtime = _make_cuda_module('cupy.cuda')
    cupy.cuda.nccl = _make_nccl_module('cupy.cuda.nccl')
    cupy.random = _make_random_module('cupy.random')
    cupy.lib = types.ModuleType('cupy.lib')
    cupy.lib.stride_tricks = types.ModuleType('cupy.lib.stride_tricks')
    cupy.lib.stride_tricks.as_strided = as_strided
    cupy.linalg = types.ModuleType('cupy.linalg')
    for name in ('norm', 'inv', 'solve', 'det', 'svd', 'qr', 'cholesky', 'eigh', 'pinv'):
        setattr(cupy.linalg, name, _function(name, numpy_function=getattr(numpy.linalg, name)))
    cupyx = types.ModuleType('cupyx')
    cupyx.scatter_add = scatter_add
    return {'cupy': cupy, 'cupy.cuda': cupy.cuda, 'cupy.cuda.runtime': runtime,
            'cupy.cuda.nccl': cupy.cuda.nccl, 'cupy.random': cupy.random,
            'cupy.linalg': cupy.linalg, 'cupyx': cupyx}


_saved_modules = {}


def install(n_devices=2):
    """Put the stand-in into ``sys.modules`` as ``cupy`` (and its submodules); return it.

    Args:
        n_devices (int): how many fake GPUs exist.
    """
    if 'cupy' in sys.modules and getattr(sys.modules['cupy'], 'is_stand_in', False):
        _config['n_devices'] = n_devices
        return sys.modules['cupy']
    _config['n_devices'] = n_devices
    for name in _MODULE_NAMES:
        if name in sys.modules:
            _saved_modules[name] = sys.modules[name]
    sys.modules.update(_make_module())
    _forget_loaded_cupy()
    return sys.modules['cupy']


def uninstall():
    """Take the stand-in out of ``sys.modules`` (restoring a real CuPy that was there)."""
    for name in _MODULE_NAMES:
        sys.modules.pop(name, None)
    sys.modules.update(_saved_modules)
    _saved_modules.clear()
    _forget_loaded_cupy()


def _forget_loaded_cupy():
    backend = sys.modules.get('cvzoo.core.backend')
    if backend is not None:
        backend._cupy = None


def is_installed():
    """True while the stand-in is ``sys.modules['cupy']``."""
    return getattr(sys.modules.get('cupy'), 'is_stand_in', False)
