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
- stream capture keeps CUDA's rules (``Stream.begin_capture`` / ``end_capture`` giving a
  ``Graph`` whose ``launch()`` reruns each recorded operation into the same arrays; a
  capture itself changes nothing): host synchronisations, host-to-device copies of host
  data, ``cupy.random`` draws and work off the capturing stream raise CUDARuntimeError
  naming the operation and its call sites, and invalidate the capture; arrays made in a
  capture hold garbage (NaN) until the graph is launched;
- ``cupy.cuda.nccl`` runs NCCL's calls over mpi4py on the memory behind the pointers, on
  the stream handle given (0 or a stream of the communicator's device); a call on the
  capturing stream is recorded, runs nothing then, and runs its MPI collective at each
  ``launch()``, in order with the graph's other operations, as NCCL >= 2.9 captures;
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
import weakref

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


def _call_sites(depth=3):
    """The innermost ``depth`` call sites outside this module and NumPy, innermost first
    (the first may be a helper: the ones after it say who called it)."""
    sites = []
    frame = sys._getframe(2)
    while frame is not None and len(sites) < depth:
        name = os.path.normcase(frame.f_code.co_filename)
        if name != _THIS_FILE and not name.startswith(_NUMPY_DIR):
            sites.append(f'{frame.f_code.co_filename}:{frame.f_lineno}')
        frame = frame.f_back
    return ' <- '.join(sites) or '?'


def _record_sync(kind):
    _refuse_in_capture(f'{kind} (a host synchronisation)')
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


# --- graph capture ----------------------------------------------------------------------
#
# While a stream captures (Stream.begin_capture), every device operation of its thread is
# run (to learn the shapes the Python code goes on with) and recorded as a closure over the
# NumPy arrays it reads and the device array it made or wrote. end_capture() undoes the
# writes the capture made to arrays (on a GPU nothing runs during a capture), fills the
# arrays the capture made with garbage (NaN) as a GPU leaves them, and returns a Graph;
# Graph.launch() runs the recorded closures again in order, writing each result
# into the same device array (static addresses), so new contents of the inputs give new
# results. What CUDA refuses in a capture is refused here with CUDARuntimeError naming the
# operation and its call site, and it invalidates the capture: host synchronisations,
# host-to-device copies of host data, host-side random generators, work on another stream.

class _Capture:
    """The work recorded while ``stream`` captures."""

    def __init__(self, stream, device):
        self.stream, self.device = stream, device
        self.operations = []    # (compute, device arrays its result goes to)
        self.saved = []         # (host array written, its contents before), to undo
        self.created = []       # device arrays made during the capture: the graph's pool
        self.fresh = []         # the memory of those (not views, not inputs given back)
        self.invalidated = None  # the operation that broke a rule, and where

    def record(self, compute, result, out):
        self.operations.append((compute, result))
        if out is None:
            made = _arrays_in(result)
            self.created.extend(made)
            inputs = _arrays_held(compute)
            self.fresh.extend(a._a for a in made
                              if a._a.flags.owndata and id(a._a) not in inputs)

    def poison(self):
        """Fill the memory made during the capture as a GPU leaves it until the first
        launch: with garbage (NaN, or the largest integer)."""
        for host in self.fresh:
            if host.flags.writeable and host.dtype.kind in 'fc':
                host.fill(numpy.nan)
            elif host.flags.writeable and host.dtype.kind in 'iu':
                host.fill(numpy.iinfo(host.dtype).max)


def _arrays_held(compute):
    """The ids of the NumPy arrays a recorded closure reads (its cells, their tuples,
    lists and dicts)."""
    found = set()
    pending = [cell.cell_contents for cell in compute.__closure__ or ()]
    while pending:
        value = pending.pop()
        if isinstance(value, numpy.ndarray):
            found.add(id(value))
        elif isinstance(value, (tuple, list)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
    return found


def _arrays_in(value):
    if isinstance(value, ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays_in(v)]
    return []


def _capture():
    """The capture open in this thread, or None."""
    return getattr(_thread, 'capture', None)


def _refuse_in_capture(operation):
    """Raise cudaErrorStreamCaptureUnsupported for ``operation`` (and invalidate the
    capture) when this thread is capturing."""
    capture = _capture()
    if capture is None:
        return
    reason = f'{operation} at {_call_sites()}'
    capture.invalidated = capture.invalidated or reason
    raise CUDARuntimeError(f'cudaErrorStreamCaptureUnsupported: {reason} is not allowed while '
                           'a stream is capturing; the capture is invalidated')


def _active_capture(what, stream_ptr=None):
    """The capture that records ``what`` (None when none is open in this thread); refuses
    work on an invalidated capture and work that is not on the capturing stream.

    Args:
        what (str): the operation, for the messages.
        stream_ptr (int): the handle of the stream ``what`` is queued on (None: the
            current stream, where CuPy queues its kernels).
    """
    capture = _capture()
    if capture is None:
        return None
    if capture.invalidated:
        raise CUDARuntimeError(f'cudaErrorStreamCaptureInvalidated: {what} at {_call_site()} '
                               f'on a capture invalidated by {capture.invalidated}')
    device = _current_device()
    stream_ptr = get_current_stream().ptr if stream_ptr is None else stream_ptr
    if device != capture.device or stream_ptr != capture.stream.ptr:
        capture.invalidated = (f'{what} at {_call_site()} on stream {stream_ptr} of device '
                               f'{device}')
        raise CUDARuntimeError(
            f'cudaErrorStreamCaptureImplicit: {capture.invalidated}, while stream '
            f'{capture.stream.ptr} of device {capture.device} captures (queue the work on '
            'the capturing stream: with stream: ...); the capture is invalidated')
    return capture


def _run(what, compute, out=None, writes=()):
    """Run ``compute`` (a closure over NumPy arrays) as one device operation: its result
    wrapped as device arrays (``out`` when given; None when the operation ``writes``
    arrays in place), recorded when a capture is open."""
    capture = _active_capture(what)
    if capture is not None:
        capture.saved.extend((host, host.copy()) for host in writes
                             if isinstance(host, numpy.ndarray))
    if writes and out is None:
        compute()
        result = None
    else:
        result = _wrap_result(compute(), out)
    if capture is not None:
        capture.record(compute, result, out)
    return result


def _store(value, target):
    """Write a replayed result into the device array(s) the capture made for it."""
    if isinstance(target, ndarray):
        value = numpy.asarray(value)
        if numpy.may_share_memory(value, target._a):
            return  # a view, or the operation wrote in place
        if value.shape != target.shape:
            raise CUDARuntimeError(f'cudaErrorInvalidValue: a replayed operation made shape '
                                   f'{value.shape}, captured as {target.shape}')
        target._a[...] = value
    elif isinstance(target, (tuple, list)):
        for v, t in zip(value, target):
            _store(v, t)


class Graph:
    """``cupy.cuda.graph.Graph``: what a stream captured; ``launch()`` runs it again."""

    def __init__(self, operations, pool):
        self._operations = operations
        self._pool = pool  # the arrays made in the capture live as long as the graph

    def launch(self, stream=None):
        """Run the captured work again, writing into the arrays the capture made."""
        for compute, target in self._operations:
            _store(compute(), target)

    def upload(self, stream=None):
        """Nothing to upload on the host."""


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
# methods that write into the array itself
_IN_PLACE_METHODS = frozenset(('fill', 'put', 'sort', 'partition'))


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


def _hosts(value):
    """The NumPy array(s) behind a device result (a tuple of them for a tuple), for the
    kernel count; anything else as it is."""
    if isinstance(value, ndarray):
        return value._a
    if isinstance(value, (tuple, list)):
        return tuple(_hosts(v) for v in value)
    return value


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
    in_place = name in _IN_PLACE_METHODS

    def method(self, *args, **kwargs):
        _check_on_current(self, f'ndarray.{name}')
        if sync:
            _record_sync(sync)
        out = kwargs.get('out')
        args, kwargs = _unwrap_all(args, kwargs, f'ndarray.{name}', allow_host)
        host = self._a
        out = out if isinstance(out, ndarray) else None
        writes = (host,) if in_place else () if out is None else (out._a,)
        result = _run(f'ndarray.{name}', lambda: getattr(host, name)(*args, **kwargs), out,
                      writes)
        _record_call(name, _hosts(result), host)
        return result
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
        capture = _active_capture('cupy.ndarray')
        if capture is not None:
            capture.created.append(self)
            capture.fresh.append(self._a)

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
        _refuse_in_capture('ndarray.set (a host-to-device copy)')
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
        host, key = self._a, _unwrap_index(key, 'ndarray.__getitem__')
        result = _run('ndarray.__getitem__', lambda: host[key])
        _record_unless_view('gather', result._a, host)
        return result

    def __setitem__(self, key, value):
        _check_on_current(self, 'ndarray.__setitem__')
        key = _unwrap_index(key, 'ndarray.__setitem__')
        if isinstance(value, (numpy.ndarray, list, tuple)):
            _refuse_in_capture('ndarray.__setitem__ of host data (a host-to-device copy)')
        value = _unwrap(value, 'ndarray.__setitem__', allow_host=True)
        host = self._a

        def assign():
            host[key] = value
        _record_kernel('setitem')
        _run('ndarray.__setitem__', assign, writes=(host,))

    # copies between devices are allowed, as CuPy's peer copies
    def copy(self, order='C'):
        host = self._a
        _record_kernel('copy')
        return _run('ndarray.copy', lambda: host.copy(order=order))

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
        _run(what, lambda: getattr(ufunc, method)(*numpy_inputs), writes=(target._a,))
        _record_kernel(what)
        return None
    _record_kernel(what)
    numpy_inputs = tuple(_unwrap(x, what) for x in inputs)
    call = getattr(ufunc, method)
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        kwargs = dict(kwargs, out=tuple(_unwrap(o, what) for o in outs))
        _run(what, lambda: call(*numpy_inputs, **kwargs), writes=kwargs['out'])
        return outs[0] if len(outs) == 1 else outs

    def compute():
        result = call(*numpy_inputs, **kwargs)
        if ufunc is numpy.matmul:
            return _matmul_dtype_as_cupy(result, numpy_inputs)
        return result
    return _run(what, compute)


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


# functions that write into their first argument
_IN_PLACE_FUNCTIONS = frozenset(('copyto', 'put', 'put_along_axis'))


def _function(name, sync=None, numpy_function=None):
    numpy_function = numpy_function or getattr(numpy, name)
    shape_function = name in _SHAPE_FUNCTIONS
    in_place = name in _IN_PLACE_FUNCTIONS

    def function(*args, **kwargs):
        if sync:
            _record_sync(sync)
        out = kwargs.get('out')
        if shape_function and args:
            rest, kwargs = _unwrap_all(args[1:], kwargs, name, allow_host=True)
            args = (_unwrap(args[0], name),) + rest
        else:
            args, kwargs = _unwrap_all(args, kwargs, name)
        out = out if isinstance(out, ndarray) else None
        writes = (args[0],) if in_place and args else () if out is None else (out._a,)
        result = _run(name, lambda: numpy_function(*args, **kwargs), out, writes)
        _record_call(name, _hosts(result), args[0] if args else None)
        return result
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
        return _run('cupy.array', lambda: numpy.array(host, dtype=dtype, copy=True, order=order))
    _refuse_in_capture('cupy.array of host data (a host-to-device copy)')
    if isinstance(value, (list, tuple)):
        host = numpy.array(_unwrap(value, 'array', allow_host=True), dtype=dtype)
    else:
        host = value
    _record_kernel('copy')
    return _wrap(numpy.array(host, dtype=dtype, copy=True, order=order))


def array(obj, dtype=None, copy=True, order='K', subok=False, ndmin=0, blocking=False):
    """Copy ``obj`` (host data, or a device array of any device) to the current device."""
    out = _to_current(obj, dtype, order=order)
    if ndmin > out.ndim:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
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
    host = a._a
    if host.flags.c_contiguous:
        return a
    _record_kernel('copy')
    return _run('cupy.ascontiguousarray', lambda: numpy.ascontiguousarray(host))


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
    host = _unwrap(x, 'as_strided')
    return _run('as_strided',
                lambda: numpy.lib.stride_tricks.as_strided(host, shape, strides))


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
            _run(self.name, lambda: twin(*host), writes=host[n_in:])
            outs = args[n_in:]
            return outs[0] if len(outs) == 1 else tuple(outs)

        def compute():
            results = twin(*host)
            results = results if isinstance(results, tuple) else (results,)
            return tuple(numpy.asarray(r) for r in results)
        wrapped = _run(self.name, compute)
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
        return _run(self.name,
                    lambda: numpy.asarray(twin(*host, axis=axis, keepdims=keepdims)))


# --- cupy.cuda -------------------------------------------------------------------------

# The stand-in runs every operation at once, on the host, so no stream ever has work
# pending. It keeps CuPy's rules all the same: each thread has a current stream per device
# (the null stream at first); a stream is entered or used only while its own device is
# current; an event is recorded only on a stream of the device it was made on; and
# get_elapsed_time() needs both events recorded and the host to have waited for them
# (Event.synchronize(), or a synchronize of their stream or device), as on a GPU that may
# not have reached them yet (cudaErrorNotReady).

_handles = itertools.count(1)  # the ptr of each new stream and event
_streams = weakref.WeakValueDictionary()  # ptr -> each stream made (not the null stream)
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


def _stream_of(handle, what):
    """The stream whose raw handle ``handle`` (``stream.ptr``; 0: the null stream) work
    ``what`` is queued on; CUDARuntimeError when it is no stream of this process or a
    stream of another device than the current one."""
    stream = Stream.null if handle == 0 else _streams.get(handle)
    if stream is None:
        raise CUDARuntimeError(f'cudaErrorInvalidResourceHandle: {what} on stream {handle!r}, '
                               'which is neither 0 nor a stream made here')
    if stream.device_id not in (-1, _current_device()):
        raise CUDARuntimeError(f'cudaErrorInvalidResourceHandle: {what} on stream {handle} of '
                               f'device {stream.device_id} while device {_current_device()} '
                               'is current')
    return stream


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
            _streams[self.ptr] = self
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

    def begin_capture(self, mode=None):
        """Record the work of this thread on this stream into a graph until end_capture()."""
        device = self._device()
        if self.ptr == 0:
            raise CUDARuntimeError('cudaErrorStreamCaptureUnsupported: the null stream '
                                   'cannot capture; capture on a new cupy.cuda.Stream()')
        if _capture() is not None:
            raise CUDARuntimeError('cudaErrorIllegalState: this thread is already capturing')
        _thread.capture = _Capture(self, device)

    def is_capturing(self):
        """Whether this stream is capturing (in this thread)."""
        capture = _capture()
        return capture is not None and capture.stream.ptr == self.ptr

    def end_capture(self):
        """End the capture; return the Graph (raises when a rule broke it)."""
        capture = _capture()
        if capture is None or capture.stream.ptr != self.ptr:
            raise CUDARuntimeError('cudaErrorIllegalState: end_capture() on a stream that is '
                                   'not capturing')
        _thread.capture = None
        for host, before in reversed(capture.saved):
            host[...] = before  # nothing runs while a GPU captures
        capture.poison()
        if capture.invalidated:
            raise CUDARuntimeError(f'cudaErrorStreamCaptureInvalidated: the capture was '
                                   f'invalidated by {capture.invalidated}')
        return Graph(capture.operations, capture.created)

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


@contextlib.contextmanager
def _using_allocator(allocator=None):
    yield


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
    cuda.MemoryPool = _MemoryPool
    cuda.using_allocator = _using_allocator
    cuda.graph = types.ModuleType(f'{name}.graph')
    cuda.graph.Graph = Graph
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

        def _queue(self, what, stream, collective):
            """Run ``collective`` now, or record it into the graph that ``stream``
            captures (it runs at each launch, nothing now: the buffers hold garbage while
            a GPU captures)."""
            self._check_device()
            _stream_of(stream, what)
            capture = _active_capture(what, stream)
            if capture is None:
                collective()
            else:
                capture.record(collective, None, None)

        def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):  # noqa: N802
            from mpi4py import MPI

            def collective():
                send = view(sendbuf, count, datatype).copy()
                if send.dtype == numpy.float16:
                    # many MPI builds have no half-precision type: sum in float16 as NCCL does
                    parts = self._mpi.allgather(send)
                    view(recvbuf, count, datatype)[...] = functools.reduce(numpy.add, parts)
                    return
                self._mpi.Allreduce(send, view(recvbuf, count, datatype), op=MPI.SUM)

            self._queue('ncclAllReduce', stream, collective)

        def bcast(self, buff, count, datatype, root, stream):
            self._queue('ncclBcast', stream,
                        lambda: self._mpi.Bcast(view(buff, count, datatype), root=root))

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
        _refuse_in_capture(f'cupy.random.{name} (a generator whose state lives on the host: '
                           'each replay would draw the same numbers)')
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
