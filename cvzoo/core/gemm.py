"""matmul for the engine's hot paths, tuned for OpenBLAS on a few (shared) cores.

OpenBLAS splits every product statically over all its threads, and its threads wait
for each other by spinning. When the other cores are busy (a shared machine) a thread
that waits for a descheduled sibling burns its time slice: measured on 2 cores with one
busy-loop process beside it, a ResNet-50 training step at batch 1 took 1.29 s with
OpenBLAS's threads and 0.84 s with this module. ``matmul`` therefore

- runs a product below SINGLE_THREAD_FLOPS on one BLAS thread (a hand-off costs more);
- cuts a larger 2-D product into blocks of output rows or columns, each a one-thread
  BLAS call, that this thread and ``n - 1`` helper threads take from a shared counter
  (parallel.run; NumPy releases the GIL in the call). ``n`` is the thread count the
  user gave OpenBLAS (``OPENBLAS_NUM_THREADS``, default: the cores). A helper that is
  not scheduled takes no block and the calling thread does the rest itself, so a busy
  machine costs little more than one thread, and an idle one runs the blocks in
  parallel. (A batched product, or one too narrow to cut, runs on one thread, or on
  OpenBLAS's threads from OPENBLAS_THREADS_FLOPS.)

On two idle cores the blocks run within a few percent of OpenBLAS's own threads
(ResNet-50 forward at batch 1: 150 ms against 147 ms), and
``with using_config('blas_threading', 'openblas'):`` leaves every product to OpenBLAS.

The thread count is set through OpenBLAS's own ``openblas_set_num_threads``, found with
ctypes in the OpenBLAS library that NumPy loaded, and restored when the last product
that lowered it ends; with another BLAS, or on a GPU, ``matmul`` is plain
``xp.matmul``. The setting is process-wide, so a product that another Python thread
runs at the same moment may also run on one thread; its result is the same.

>>> import numpy as np
>>> matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).shape
(2, 4)
"""

import contextlib
import ctypes
import glob
import os
import threading

import numpy

from cvzoo.core import backend, config, parallel

# Products of fewer floating-point operations (2 * M * K * N) run on one BLAS thread.
# Measured on 2 idle cores: ResNet-50 at batch 1 took 2^20 to 2^24 alike (2^29 35%
# slower); yolo_fastest's predict() 94 ms at 2^22, 108 ms at 2^20 (its many small
# products lose more to the hand-off than they gain).
SINGLE_THREAD_FLOPS = 2 ** 22
# A product that cannot be cut into blocks (batched, or too narrow) runs on OpenBLAS's
# own threads from this size, on one thread below it.
OPENBLAS_THREADS_FLOPS = 2 ** 29
# A larger product is cut into about this many blocks per thread, none narrower than
# MIN_BLOCK rows or columns (narrower blocks lose BLAS efficiency).
BLOCKS_PER_THREAD = 3
MIN_BLOCK = 128
# A reduction axis is cut into blocks no shorter than this.
MIN_REDUCTION_BLOCK = 2048

_SYMBOL_PREFIXES = ('scipy_openblas', 'openblas')  # NumPy's wheels, then a system build
_SYMBOL_SUFFIXES = ('64_', '')


class _ThreadControl:
    """get/set of OpenBLAS's thread count through ctypes."""

    def __init__(self, get_threads, set_threads):
        self._get = get_threads
        self._set = set_threads

    def get(self):
        return int(self._get())

    def set(self, n_threads):
        self._set(int(n_threads))


_control = None
_searched = False


def _loaded_openblas_paths():
    """Paths of the OpenBLAS libraries in this process (NumPy has loaded one)."""
    paths = []
    try:
        with open('/proc/self/maps') as maps:
            for line in maps:
                path = line.split()[-1]
                if 'openblas' in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    numpy_dir = os.path.dirname(numpy.__file__)
    for pattern in ('../numpy.libs/*openblas*', '.dylibs/*openblas*'):
        paths += sorted(glob.glob(os.path.join(numpy_dir, pattern)))
    return paths


def _find_control():
    for path in _loaded_openblas_paths():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _SYMBOL_PREFIXES:
            for suffix in _SYMBOL_SUFFIXES:
                get_name = f'{prefix}_get_num_threads{suffix}'
                set_name = f'{prefix}_set_num_threads{suffix}'
                if hasattr(library, get_name) and hasattr(library, set_name):
                    getter, setter = getattr(library, get_name), getattr(library, set_name)
                    getter.restype = ctypes.c_int
                    setter.argtypes = [ctypes.c_int]
                    setter.restype = None
                    return _ThreadControl(getter, setter)
    return None


def thread_control():
    """The OpenBLAS thread control of this process, or None (looked up once)."""
    global _control, _searched
    if not _searched:
        _control = _find_control()
        _searched = True
    return _control


_active = 0  # products running now with OpenBLAS held at one thread
_active_lock = threading.Lock()
_configured = None


def configured_threads():
    """The thread count the user gave OpenBLAS (1 without an OpenBLAS control).

    While a product holds OpenBLAS at one thread, this is the count seen before, not 1.
    """
    global _configured
    control = thread_control()
    if control is None:
        return 1
    if _active == 0 or _configured is None:
        _configured = control.get()
    return _configured


def matmul(a, b, out=None):
    """``xp.matmul(a, b, out=out)``, threaded as the module docstring says.

    Args:
        a (array): (..., M, K).
        b (array): (..., K, N), on a's device.
        out (array or None): where to write the (..., M, N) result.

    Returns:
        array: the product (``out`` when given).
    """
    xp = backend.get_array_module(a, b)
    policy = config.config.blas_threading
    if policy not in ('cvzoo', 'openblas'):
        raise ValueError(f"config.blas_threading: expected 'cvzoo' or 'openblas', got {policy!r}")
    if xp is not numpy or a.ndim < 2 or b.ndim < 2 or policy == 'openblas':
        return xp.matmul(a, b, out=out)
    batch = max(a.size // max(a.shape[-2] * a.shape[-1], 1),
                b.size // max(b.shape[-2] * b.shape[-1], 1))
    flops = 2 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1]
    n_threads = configured_threads()
    if n_threads <= 1:
        return numpy.matmul(a, b, out=out)
    blocks = None
    if flops >= SINGLE_THREAD_FLOPS:
        if a.ndim == b.ndim == 2:
            blocks = _blocks(a.shape[0], a.shape[1], b.shape[1], n_threads)
        if blocks is not None and len(blocks) < 2:
            blocks = None
        if blocks is None and flops >= OPENBLAS_THREADS_FLOPS:
            return numpy.matmul(a, b, out=out)  # OpenBLAS's own threads
    with one_blas_thread():
        if blocks is None:
            return numpy.matmul(a, b, out=out)
        return _blocked_matmul(a, b, out, blocks, n_threads)


@contextlib.contextmanager
def one_blas_thread():
    """Hold OpenBLAS at one thread inside the block (for work that threads itself).

    Nested and concurrent uses are counted; the last one to leave restores the count
    the user configured. Without an OpenBLAS control this does nothing.
    """
    global _active
    control = thread_control()
    if control is None:
        yield
        return
    n_threads = configured_threads()
    with _active_lock:
        _active += 1
        control.set(1)
    try:
        yield
    finally:
        with _active_lock:
            _active -= 1
            if _active == 0:
                control.set(n_threads)


def _blocks(m, k, n, n_threads):
    """Cut an (m, k) x (k, n) product: [(axis, start, stop), ...].

    The longer axis of the result (0: rows, 1: columns) is cut; when the result is too
    small for that (a weight gradient: a long reduction to a small matrix), the
    reduction axis (2) is cut into blocks of at least MIN_REDUCTION_BLOCK, whose partial
    products are summed.
    """
    axis, length, smallest = (0, m, MIN_BLOCK) if m > n else (1, n, MIN_BLOCK)
    if length < 2 * MIN_BLOCK:
        axis, length, smallest = 2, k, MIN_REDUCTION_BLOCK
    count = max(1, min(BLOCKS_PER_THREAD * n_threads, length // smallest))
    step = -(-length // count)
    return [(axis, start, min(start + step, length)) for start in range(0, length, step)]


def _blocked_matmul(a, b, out, blocks, n_threads):
    shape = (a.shape[0], b.shape[1])
    if out is None:
        out = numpy.empty(shape, dtype=numpy.result_type(a, b))
    elif out.shape != shape:
        return numpy.matmul(a, b, out=out)  # let NumPy name the mismatch
    if blocks[0][0] == 2:
        return _reduction_blocked_matmul(a, b, out, blocks, n_threads)

    def block(axis, start, stop):
        if axis == 0:
            return lambda: numpy.matmul(a[start:stop], b, out=out[start:stop])
        return lambda: numpy.matmul(a, b[:, start:stop], out=out[:, start:stop])

    parallel.run([block(*spec) for spec in blocks], n_threads)
    return out


def _reduction_blocked_matmul(a, b, out, blocks, n_threads):
    partials = numpy.empty((len(blocks),) + out.shape, dtype=out.dtype)

    def block(index, start, stop):
        return lambda: numpy.matmul(a[:, start:stop], b[start:stop], out=partials[index])

    parallel.run([block(i, start, stop) for i, (_, start, stop) in enumerate(blocks)],
                 n_threads)
    return numpy.sum(partials, axis=0, out=out)
