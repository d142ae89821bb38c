"""Devices and array modules: the only module of cvzoo that imports CuPy.

A device is named ``'cpu'`` or ``'cuda:N'``. NumPy arrays live on the CPU, CuPy arrays on
a GPU. CuPy is imported lazily, on the first request for a GPU device, so cvzoo imports
and runs fully without it.

>>> import numpy as np
>>> get_device('cpu')
Device('cpu')
>>> get_array_module(np.zeros(3)) is np
True
"""

import contextlib
import functools
import sys
import threading
import time
from typing import Any, Union

import numpy

from cvzoo import errors

# An array of either backend; written in signatures instead of numpy.ndarray.
Array = Any

_cupy = None


def _import_cupy():
    """Import CuPy once, make its memory pool the allocator, and return the module."""
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError as exc:
            raise RuntimeError(
                'a CUDA device was requested but CuPy is not installed; '
                "install it with: pip install 'cvzoo[cuda]'"
            ) from exc
        cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
        _cupy = cupy
    return _cupy


def _cupy_if_loaded():
    """Return CuPy when something already imported it, else None (never imports it)."""
    if _cupy is not None:
        return _cupy
    if 'cupy' not in sys.modules:
        return None
    return _import_cupy()


def is_cuda_available() -> bool:
    """Return True when CuPy imports and sees at least one GPU."""
    try:
        cupy = _import_cupy()
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - any failure means "no usable GPU"
        return False


class Device:
    """A place where arrays live: the CPU or one CUDA GPU.

    Args:
        name (str): ``'cpu'`` or ``'cuda:N'``.

    Attributes:
        name (str): the canonical name.
        kind (str): ``'cpu'`` or ``'cuda'``.
        id (int): -1 for the CPU, the GPU ordinal otherwise.
    """

    def __init__(self, name: str):
        if name == 'cpu':
            self.kind, self.id = 'cpu', -1
        elif name.startswith('cuda:') and name[5:].isdigit():
            self.kind, self.id = 'cuda', int(name[5:])
        else:
            raise ValueError("device: expected 'cpu', 'cuda:N' or (through get_device) 'cuda', "
                             f'got {name!r}')
        self.name = name

    @property
    def xp(self):
        """The array module of this device (numpy or cupy)."""
        return numpy if self.kind == 'cpu' else _import_cupy()

    def send(self, array: Array) -> Array:
        """Return ``array`` on this device: itself when already here, else a copy."""
        return to_device(array, self)

    def use(self):
        """Make this device current in this thread (a no-op on the CPU); return self.

        ``with device:`` makes it current for the block only.
        """
        if self.kind == 'cuda':
            _import_cupy().cuda.Device(self.id).use()
        return self

    def synchronize(self):
        """Wait until the work queued on this device is done (a no-op on the CPU).

        Every stream of the GPU is waited for (CuPy's ``Device(n).synchronize()``); it is
        a host synchronisation, as ``float()`` of a device array is.
        """
        if self.kind == 'cuda':
            _import_cupy().cuda.Device(self.id).synchronize()

    @contextlib.contextmanager
    def stream(self, stream=None):
        """Run the block on a CUDA stream of this device other than the default one.

        The device is current in the block and ``stream`` (a new ``cupy.cuda.Stream`` when
        None) is its current stream, so the kernels the block launches are queued there.
        A new stream waits for the default stream and the default stream for it (CuPy's
        blocking streams), so work after the block sees its results; wait for the stream
        itself with ``stream.synchronize()`` before timing or reading them on the host.

        Args:
            stream: a ``cupy.cuda.Stream`` made on this device, or None for a new one.

        Yields:
            the stream (None on the CPU, where the block simply runs).
        """
        if self.kind == 'cpu':
            if stream is not None:
                raise errors.UsageError(f'stream: the CPU has no streams, got {stream!r}')
            yield None
            return
        cuda = _import_cupy().cuda
        with self:
            if stream is None:
                stream = cuda.Stream()
            elif getattr(stream, 'device_id', -1) not in (-1, self.id):
                raise errors.DeviceMismatchError(
                    f'stream: it was made on cuda:{stream.device_id}, not on {self}')
            with stream:
                yield stream

    def __enter__(self):
        if self.kind == 'cuda':
            scope = _import_cupy().cuda.Device(self.id)
            _scopes().append(scope)
            scope.__enter__()
        return self

    def __exit__(self, *exc_info):
        if self.kind == 'cuda':
            _scopes().pop().__exit__(*exc_info)
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f'Device({self.name!r})'

    def __str__(self):
        return self.name


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


_NULL_CONTEXT = _NullContext()
_thread_state = threading.local()


def _scopes():
    """The CuPy device contexts that ``with device:`` blocks of this thread have entered."""
    stack = getattr(_thread_state, 'scopes', None)
    if stack is None:
        stack = _thread_state.scopes = []
    return stack


CPU = Device('cpu')

DeviceSpec = Union[str, int, Device, None]


def get_device(spec: DeviceSpec) -> Device:
    """Turn a device spec into a Device.

    Args:
        spec: ``'cpu'``, ``'cuda:N'``, ``'cuda'`` (the GPU current in this thread, as
            ``torch.device('cuda')`` means), an int (-1 is the CPU, N >= 0 is cuda:N), a
            Device, or None (the CPU).

    Returns:
        Device: the device named; ``'cuda'`` gives ``Device('cuda:N')`` for the current N.
    """
    if isinstance(spec, Device):
        return spec
    if spec is None:
        return CPU
    if isinstance(spec, bool):
        raise TypeError(f'device: expected a str, int or Device, got {spec!r}')
    if isinstance(spec, (int, numpy.integer)):
        return CPU if spec < 0 else Device(f'cuda:{int(spec)}')
    if isinstance(spec, str):
        if spec == 'cuda':
            return Device(f'cuda:{_import_cupy().cuda.runtime.getDevice()}')
        return CPU if spec == 'cpu' else Device(spec)
    raise TypeError(f'device: expected a str, int or Device, got {type(spec).__name__}')


def require_device(spec: DeviceSpec) -> Device:
    """Turn a device spec into a Device that can be used on this machine.

    For ``'cuda:N'`` CuPy is imported and GPU N must be visible, so that a command line
    refuses the device before any work, instead of failing at the first array.

    Raises:
        cvzoo.errors.UsageError: CuPy is not installed, or there is no GPU N; the message
            names the device.
    """
    try:
        device = get_device(spec)  # 'cuda' asks CuPy which GPU is current
        if device.kind == 'cpu':
            return device
        _import_cupy()
    except RuntimeError as exc:
        raise errors.UsageError(f'device {spec}: {exc}') from None
    n_gpu = num_gpus()
    if n_gpu == 0:
        raise errors.UsageError(f'device {device.name}: CuPy sees no CUDA GPU on this machine')
    if device.id >= n_gpu:
        raise errors.UsageError(f'device {device.name}: this machine has {n_gpu} visible CUDA '
                                f'GPU(s), cuda:0 to cuda:{n_gpu - 1}')
    return device


def _raw(x):
    """The array inside a Variable, or x itself."""
    return getattr(x, 'array', x) if not isinstance(x, (numpy.ndarray, numpy.generic)) else x


def get_device_from_array(x: Array) -> Device:
    """Return the Device that array (or Variable) ``x`` lives on."""
    x = _raw(x)
    if isinstance(x, (numpy.ndarray, numpy.generic)) or x is None:
        return CPU
    cupy = _cupy_if_loaded()
    if cupy is not None and isinstance(x, cupy.ndarray):
        return Device(f'cuda:{x.device.id}')
    return CPU


def get_array_module(*args):
    """Return cupy when any argument is a CuPy array (or holds one), numpy otherwise.

    Arguments may be arrays, Variables, scalars or None.
    """
    # NOTE: _cupy_if_loaded() inlined for the CPU: this runs several times per function
    cupy = _cupy
    if cupy is None:
        if 'cupy' not in sys.modules:
            return numpy
        cupy = _import_cupy()
    ndarray = cupy.ndarray
    for x in args:
        if isinstance(x, ndarray) or isinstance(getattr(x, 'array', None), ndarray):
            return cupy
    return numpy


def to_device(x: Array, device: DeviceSpec, copy: bool = False) -> Array:
    """Return array ``x`` on ``device``: x itself when already there, else a copy.

    With ``copy=True`` the result is always a new array, also when ``x`` is already on
    ``device`` (the d2l book's ``copyto`` against ``as_in_ctx``); the copy is made with
    the device current. None passes through unchanged; NumPy scalars become 0-d arrays
    on a GPU.

    >>> import numpy as np
    >>> x = np.zeros(2)
    >>> to_device(x, 'cpu') is x, to_device(x, 'cpu', copy=True) is x
    (True, False)
    """
    if x is None:
        return None
    device = get_device(device)
    if device.kind == 'cpu':
        host = to_numpy(x)
        return host.copy() if copy and host is x else host
    cupy = _import_cupy()
    with cupy.cuda.Device(device.id):
        if isinstance(x, cupy.ndarray) and x.device.id == device.id:
            return x.copy() if copy else x
        return cupy.asarray(x)  # a new array, from the host or from another GPU


def to_numpy(x: Array) -> Array:
    """Return ``x`` as a NumPy array on the host (x itself when it already is one)."""
    if isinstance(x, (numpy.ndarray, numpy.generic)) or x is None:
        return x
    cupy = _cupy_if_loaded()
    if cupy is not None and isinstance(x, cupy.ndarray):
        return x.get()
    return numpy.asarray(x)


def check_same_device(arrays, what: str) -> None:
    """Raise DeviceMismatchError naming both devices when ``arrays`` are not co-located.

    Args:
        arrays: arrays (None entries are skipped).
        what (str): the operation, for the message.
    """
    if _cupy_if_loaded() is None:
        return  # without CuPy every array is a NumPy array on the CPU
    first = None
    for x in arrays:
        if x is None:
            continue
        device = get_device_from_array(x)
        if first is None:
            first = device
        elif device != first:
            raise errors.DeviceMismatchError(
                f'{what}: inputs live on different devices, {first} and {device}; '
                'move them with to_device() or F.copy() first'
            )


def is_float_dtype(dtype) -> bool:
    """Whether ``dtype`` is a floating-point dtype: NumPy's float16/32/64, or bfloat16.

    NOTE: ml_dtypes' bfloat16 (cvzoo.core.autocast) is a NumPy user dtype of kind 'V',
    so ``dtype.kind == 'f'`` misses it; it is recognised by name, without importing
    ml_dtypes.

    >>> is_float_dtype(numpy.float32), is_float_dtype(numpy.int64)
    (True, False)
    """
    dtype = numpy.dtype(dtype)
    return dtype.kind == 'f' or dtype.name == 'bfloat16'


# dtypes CUDA's atomicAdd takes, and so CuPy's add.at / cupyx.scatter_add
_ATOMIC_ADD_DTYPES = frozenset(numpy.dtype(t) for t in (
    numpy.float16, numpy.float32, numpy.float64, numpy.int32, numpy.uint32, numpy.uint64))


def add_at(target: Array, slices, values) -> None:
    """``numpy.add.at`` for any dtype on NumPy and CuPy alike (in place, unbuffered).

    On a GPU, dtypes that CUDA's atomicAdd lacks (int64, int8/16, uint8/16, bool) are
    summed in a wider type it has and written back.

    >>> import numpy as np
    >>> a = np.zeros(3, np.int64)
    >>> add_at(a, np.array([0, 0, 2]), 1)
    >>> a
    array([2, 0, 1])
    """
    xp = get_array_module(target)
    if xp is numpy or numpy.dtype(target.dtype) in _ATOMIC_ADD_DTYPES:
        xp.add.at(target, slices, values)
        return
    # int64 goes through float64 (exact below 2 ** 53), narrower ints through 32 bits
    wide = {'i': numpy.int32, 'u': numpy.uint32, 'b': numpy.uint32}.get(target.dtype.kind)
    if wide is None or target.dtype.itemsize >= 8:
        wide = numpy.float64
    total = target.astype(wide)
    xp.add.at(total, slices, xp.asarray(values).astype(wide))
    target[...] = total.astype(target.dtype)


def using_device_of(*arrays):
    """A context manager that makes the device of the first GPU array current.

    The engine wraps each FunctionNode's forward and backward and each optimizer update in
    it, so that work on arrays of ``'cuda:1'`` runs with GPU 1 current. Arguments may be
    arrays, Variables, None, or lists of them; without a GPU array (or without CuPy) the
    block runs unchanged.

    >>> import numpy as np
    >>> with using_device_of(np.zeros(2)):
    ...     pass
    """
    if _cupy is None and 'cupy' not in sys.modules:
        return _NULL_CONTEXT
    for x in arrays:
        gpu = _first_gpu(x if isinstance(x, (list, tuple)) else (x,))
        if gpu is not None:
            return _cupy.cuda.Device(gpu)
    return _NULL_CONTEXT


def device_scope(arrays, what: str = None):
    """For one operation on ``arrays``: check they share a device (when ``what`` names
    the operation), and return the context manager that makes it current, or None when
    there is nothing to enter.

    None comes whenever CuPy is not loaded, no array is a GPU array, or their GPU is
    already the current one, so that the engine calls ``forward`` and ``backward`` without
    entering a context that would change nothing.

    Raises:
        cvzoo.errors.DeviceMismatchError: as :func:`check_same_device`, naming ``what``.

    >>> import numpy as np
    >>> device_scope((np.zeros(2),), 'Add') is None
    True
    """
    cupy = _cupy  # _cupy_if_loaded(), inline
    if cupy is None:
        if 'cupy' not in sys.modules:
            return None
        cupy = _import_cupy()
    # NOTE: one pass for the check and the device, in plain code: it runs for every
    # function call on a GPU, where the host's Python work bounds a training step
    ndarray = cupy.ndarray
    first = gpu = None  # the first array's device ordinal (-1: the host), the first GPU's
    for x in arrays:
        if x is None:
            continue
        if isinstance(x, ndarray):
            ordinal = x.device.id
        else:
            x = getattr(x, 'array', x)
            ordinal = x.device.id if isinstance(x, ndarray) else -1
        if gpu is None and ordinal >= 0:
            gpu = ordinal
        if first is None:
            first = ordinal
        elif ordinal != first and what is not None:
            check_same_device(arrays, what)  # raises, naming both devices
    if gpu is None or gpu == cupy.cuda.runtime.getDevice():
        return None  # entering the current device would change nothing
    return cupy.cuda.Device(gpu)


def is_current(device: Device) -> bool:
    """True when entering ``device`` would change nothing: it is the CPU or the GPU
    current in this thread."""
    return device.kind == 'cpu' or (
        _cupy is not None and device.id == _cupy.cuda.runtime.getDevice())


def is_gpu_array(x) -> bool:
    """True when ``x`` is a CuPy array (never imports CuPy)."""
    cupy = _cupy if _cupy is not None else _cupy_if_loaded()
    return cupy is not None and isinstance(x, cupy.ndarray)


def _first_gpu(arrays):
    """The device ordinal of the first GPU array (or Variable holding one) among
    ``arrays``, or None when there is none."""
    cupy = _cupy  # _cupy_if_loaded(), inline: this runs for every launch of own kernels
    if cupy is None:
        if 'cupy' not in sys.modules:
            return None
        cupy = _import_cupy()
    ndarray = cupy.ndarray
    for x in arrays:
        if not isinstance(x, ndarray):
            x = getattr(x, 'array', None)
            if not isinstance(x, ndarray):
                continue
        return x.device.id
    return None


def _launch(kernel, gpu, args, kwargs):
    """Run CuPy ``kernel`` with GPU ``gpu`` current, entering it only when it is not."""
    if gpu == _cupy.cuda.runtime.getDevice():
        return kernel(*args, **kwargs)
    with _cupy.cuda.Device(gpu):
        return kernel(*args, **kwargs)


def on_device_of(value, reference: Array, dtype=None) -> Array:
    """Return host-side ``value`` (array, list or scalar) as an array on ``reference``'s device.

    For small arguments given on the host (class weights, indexes, labels) meeting device
    arrays: they are copied once, explicitly. None stays None.

    >>> import numpy as np
    >>> on_device_of([1, 2], np.zeros(3), dtype=np.int32)
    array([1, 2], dtype=int32)
    """
    if value is None:
        return None
    device = get_device_from_array(reference)
    source = get_device_from_array(value)
    if source.kind == 'cuda' and source != device:
        raise errors.DeviceMismatchError(
            f'an argument on {source} met arrays on {device}; move it with to_device() first')
    if device.kind == 'cpu':
        return numpy.asarray(to_numpy(value), dtype=dtype)
    cupy = _import_cupy()
    with cupy.cuda.Device(device.id):
        return cupy.asarray(value, dtype=dtype)


def device_constant(values, reference):
    """Host constant ``values`` (a NumPy array: anchors, scales) on ``reference``'s device.

    On the CPU ``values`` itself; on a GPU a copy made once per value and device and kept,
    so that a training step or forward reads it without a copy from the host (which would
    keep the step out of a CUDA graph), as ``F.resize_images`` keeps its matrices.
    """
    device = get_device_from_array(reference)
    if device.kind == 'cpu':
        return values
    values = numpy.ascontiguousarray(values)
    return _cached_constant(values.tobytes(), values.dtype.str, values.shape, str(device))


@functools.lru_cache(maxsize=256)
def _cached_constant(data, dtype, shape, device):
    return to_device(numpy.frombuffer(data, dtype).reshape(shape).copy(), device)


def _checked_shape(shape) -> tuple:
    """``shape`` as a tuple of ints >= 0; UsageError naming it otherwise."""
    dims = (shape,) if isinstance(shape, (int, numpy.integer)) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = None
    if dims is None or not all(
            isinstance(d, (int, numpy.integer)) and not isinstance(d, bool) and d >= 0
            for d in dims):
        raise errors.UsageError(f'shape: expected an int or a tuple of ints >= 0, got {shape!r}')
    return tuple(int(d) for d in dims)


def _create(name: str, shape, dtype, device: DeviceSpec, *args) -> Array:
    """``xp.<name>(shape, *args, dtype)`` made on ``device`` with that device current."""
    shape = _checked_shape(shape)
    device = get_device(device)
    with device:
        return getattr(device.xp, name)(shape, *args, dtype=dtype)


def zeros(shape, dtype=numpy.float32, device: DeviceSpec = None) -> Array:
    """A new array of zeros made directly on ``device`` (default: the CPU), no host copy.

    >>> zeros((2, 3)).dtype
    dtype('float32')
    """
    return _create('zeros', shape, dtype, device)


def ones(shape, dtype=numpy.float32, device: DeviceSpec = None) -> Array:
    """A new array of ones made directly on ``device`` (default: the CPU)."""
    return _create('ones', shape, dtype, device)


def full(shape, fill_value, dtype=numpy.float32, device: DeviceSpec = None) -> Array:
    """A new array filled with the scalar ``fill_value``, made directly on ``device``."""
    return _create('full', shape, dtype, device, fill_value)


def empty(shape, dtype=numpy.float32, device: DeviceSpec = None) -> Array:
    """A new array, its values not set, made directly on ``device`` (default: the CPU)."""
    return _create('empty', shape, dtype, device)


def _device_or_current(device: DeviceSpec) -> Device:
    """``device``; for None the current GPU when CuPy is in use, else the CPU."""
    if device is not None:
        return get_device(device)
    cupy = _cupy_if_loaded()
    if cupy is None or cupy.cuda.runtime.getDeviceCount() == 0:
        return CPU
    return get_device('cuda')


def synchronize(device: DeviceSpec = None) -> None:
    """Wait until the work queued on ``device`` is done (``torch.cuda.synchronize``).

    GPU work is asynchronous: a function returns once its kernels are queued. Call this
    before reading a clock, or use :func:`timer`. A no-op on the CPU.

    Args:
        device: the device to wait for; None is the current GPU (the CPU, a no-op, when
            CuPy is not in use).
    """
    _device_or_current(device).synchronize()


class Timer:
    """Times a block on one device; made by :func:`timer`.

    Attributes:
        device (Device): the device timed.
        elapsed_ms (float): the block's time in milliseconds, set when the block ends
            (None before, and after a block that raised).
    """

    def __init__(self, device: Device):
        self.device = device
        self.elapsed_ms = None
        self._start = self._end = self._stream = None

    def __enter__(self):
        self.elapsed_ms = None
        if self.device.kind == 'cpu':
            self._start = time.perf_counter()
            return self
        cuda = _import_cupy().cuda
        with cuda.Device(self.device.id):
            self._stream = cuda.get_current_stream()
            self._start, self._end = cuda.Event(), cuda.Event()
            self._start.record(self._stream)
        return self

    def __exit__(self, exc_type, *exc_info):
        if exc_type is not None:
            return False
        if self.device.kind == 'cpu':
            self.elapsed_ms = (time.perf_counter() - self._start) * 1000.0
            return False
        cuda = _import_cupy().cuda
        with cuda.Device(self.device.id):
            self._end.record(self._stream)
            self._end.synchronize()
            self.elapsed_ms = float(cuda.get_elapsed_time(self._start, self._end))
        return False


def timer(device: DeviceSpec = None) -> Timer:
    """Time a block of work on ``device``: ``with timer(device) as t: ...``, then ``t.elapsed_ms``.

    On a GPU two CUDA events are recorded on the device's current stream, before and after
    the block, and the host waits for the second when the block ends (one host
    synchronisation), so the time is the GPU's, not the time taken to queue the kernels.
    On the CPU it reads ``time.perf_counter``.

    Args:
        device: the device to time; None is the current GPU (the CPU when CuPy is not in
            use).

    >>> with timer('cpu') as t:
    ...     _ = sum(range(1000))
    >>> t.elapsed_ms >= 0
    True
    """
    return Timer(_device_or_current(device))


def num_gpus() -> int:
    """How many CUDA GPUs are visible (0 without CuPy or without a GPU)."""
    if not is_cuda_available():
        return 0
    return int(_import_cupy().cuda.runtime.getDeviceCount())


def try_gpu(i: int = 0) -> Device:
    """``Device('cuda:i')`` when GPU ``i`` exists, else the CPU (as in the d2l book).

    >>> str(try_gpu(10000))
    'cpu'
    """
    return Device(f'cuda:{i}') if 0 <= i < num_gpus() else CPU


def try_all_gpus() -> list:
    """Every visible GPU as a Device, or ``[Device('cpu')]`` when there is none."""
    return [Device(f'cuda:{i}') for i in range(num_gpus())] or [CPU]


_KERNEL_TWINS = {}
_KERNEL_SIGNATURES = {}


class ElementwiseKernel:
    """A ``cupy.ElementwiseKernel`` on device arrays, its NumPy twin on host arrays.

    Made by :func:`elementwise_kernel`; called with the kernel's inputs, returns its
    outputs (a tuple when it has several); called with the inputs and the outputs,
    updates the outputs in place. The CUDA kernel is compiled on first use per process,
    with the arrays' device current.
    """

    def __init__(self, in_params, out_params, operation, name, numpy_fallback):
        self.in_params, self.out_params = in_params, out_params
        self.operation, self.name = operation, name
        self.numpy_fallback = numpy_fallback
        self._kernel = None

    def __call__(self, *args):
        gpu = _first_gpu(args)
        if gpu is None:
            return self.numpy_fallback(*args)
        if self._kernel is None:
            self._kernel = _cupy.ElementwiseKernel(self.in_params, self.out_params,
                                                   self.operation, self.name)
        return _launch(self._kernel, gpu, args, {})


class ReductionKernel:
    """A ``cupy.ReductionKernel`` on device arrays, its NumPy twin on host arrays.

    Made by :func:`reduction_kernel`; called as ``kernel(*inputs, axis=..., keepdims=...)``.
    """

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr,
                 identity, name, reduce_type, numpy_fallback):
        self.args = (in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                     name, reduce_type)
        self.name = name
        self.numpy_fallback = numpy_fallback
        self._kernel = None

    def __call__(self, *inputs, axis=None, keepdims=False):
        gpu = _first_gpu(inputs)
        if gpu is None:
            return self.numpy_fallback(*inputs, axis=axis, keepdims=keepdims)
        if self._kernel is None:
            self._kernel = _cupy.ReductionKernel(*self.args[:7], reduce_type=self.args[7])
        return _launch(self._kernel, gpu, inputs, {'axis': axis, 'keepdims': keepdims})


def elementwise_kernel(in_params: str, out_params: str, operation: str, name: str,
                       numpy_fallback) -> ElementwiseKernel:
    """Write one's own GPU kernel with a NumPy twin, as Chainer's GPU guide does.

    Args:
        in_params (str): CuPy's input declaration, e.g. ``'T x, T y'``.
        out_params (str): the output declaration, e.g. ``'T z'``.
        operation (str): the CUDA C body for one element, e.g. ``'z = x * y'``.
        name (str): the kernel's name (unique in the process).
        numpy_fallback: callable on NumPy arrays giving the same output(s).

    Returns:
        ElementwiseKernel: callable on NumPy or CuPy arrays alike. Called with the inputs
        it returns new outputs; called with the inputs followed by the outputs it writes
        those in place, and the operation may read them first (CuPy's outputs are
        read-write: ``'v = momentum * v - lr * g'`` updates ``v``). The twin is then
        called with the same arguments and must update the outputs in place too.

    >>> import numpy as np
    >>> squared_diff = elementwise_kernel(
    ...     'T x, T y', 'T z', 'z = (x - y) * (x - y)', 'doc_squared_diff',
    ...     lambda x, y: (x - y) ** 2)
    >>> squared_diff(np.array([3.0]), np.array([1.0]))
    array([4.])
    """
    _register('elementwise_kernel', name, (in_params, out_params, operation), numpy_fallback)
    return ElementwiseKernel(in_params, out_params, operation, name, numpy_fallback)


def reduction_kernel(in_params: str, out_params: str, map_expr: str, reduce_expr: str,
                     post_map_expr: str, identity: str, name: str, numpy_fallback,
                     reduce_type: str = None) -> ReductionKernel:
    """A reduction in one GPU kernel (``cupy.ReductionKernel``) with a NumPy twin.

    Args:
        in_params, out_params (str): CuPy's declarations, e.g. ``'T x, T m'``, ``'T s'``.
        map_expr (str): the value of one element, e.g. ``'(x - m) * (x - m)'``.
        reduce_expr (str): how two partial results ``a`` and ``b`` combine, e.g. ``'a + b'``.
        post_map_expr (str): the output from the reduced ``a``, e.g. ``'s = a'``.
        identity (str): the reduction's neutral value, e.g. ``'0'``.
        name (str): the kernel's name (unique in the process).
        numpy_fallback: ``f(*inputs, axis, keepdims)`` on NumPy arrays, the same result.
        reduce_type (str): the C type partial results are kept in (default: the output's).

    Returns:
        ReductionKernel: callable as ``kernel(*inputs, axis=None, keepdims=False)``.

    >>> import numpy as np
    >>> sum_sq_dev = reduction_kernel(
    ...     'T x, T m', 'T s', '(x - m) * (x - m)', 'a + b', 's = a', '0', 'doc_sum_sq_dev',
    ...     lambda x, m, axis, keepdims: ((x - m) ** 2).sum(axis=axis, keepdims=keepdims))
    >>> sum_sq_dev(np.array([[1.0, 3.0]]), np.array([[2.0]]), axis=1)
    array([2.])
    """
    _register('reduction_kernel', name, (in_params, out_params, map_expr, reduce_expr,
                                         post_map_expr, identity, reduce_type), numpy_fallback)
    return ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
                           identity, name, reduce_type, numpy_fallback)


def _register(what, name, signature, numpy_fallback):
    if _KERNEL_SIGNATURES.setdefault(name, signature) != signature:
        raise ValueError(f'{what}: name {name!r} is taken by another kernel')
    _KERNEL_TWINS[name] = numpy_fallback


def numpy_twin_of(name: str):
    """The NumPy twin registered for kernel ``name`` (used by the CuPy stand-in)."""
    try:
        return _KERNEL_TWINS[name]
    except KeyError:
        raise KeyError(f'no kernel named {name!r} was made by elementwise_kernel') from None


def current_stream_handle() -> int:
    """The handle (``ptr``) of CuPy's current stream of the current GPU (0: its default
    stream): where a library outside CuPy (NCCL) must queue its work to run in order with
    CuPy's kernels, and to be captured with them while that stream captures a CUDA graph.
    """
    return _import_cupy().cuda.get_current_stream().ptr


def nccl_module():
    """CuPy's NCCL binding, for the 'nccl' communicator of cvzoo.core.communicators.

    Imports CuPy; raises RuntimeError naming the install command when it is absent.
    """
    _import_cupy()
    from cupy.cuda import nccl  # lazily, like the rest of CuPy

    return nccl
