"""matmul for the engine's hot paths, tuned for OpenBLAS on a few (shared) cores.

OpenBLAS splits every product over all its threads, and its threads wait for each
other by spinning. For a product of a few hundred MFLOP the synchronisation costs
more than it saves, and when the other cores are busy (a shared machine) a thread
that waits for a descheduled sibling burns its time slice: measured on 2 shared cores,
ResNet-50 at batch 1 ran 3.6 times faster on one BLAS thread than on two, and at
batch 8 under load 2 times faster. ``matmul`` therefore

- runs a product below SINGLE_THREAD_FLOPS on one BLAS thread;
- cuts a larger 2-D product into blocks of output rows or columns that this thread
  and ``n - 1`` helper threads take from a shared counter, each block a one-thread BLAS
  call (NumPy releases the GIL in it). ``n`` is the thread count the user gave OpenBLAS
  (``OPENBLAS_NUM_THREADS``, default: the cores). A helper that is not scheduled takes
  no block, and the calling thread does the rest itself, so a busy machine costs
  little more than one thread, and an idle one runs the blocks in parallel. (A large
  batched product, or one too narrow to cut, keeps OpenBLAS's own threads.)

The thread count is set through OpenBLAS's own ``openblas_set_num_threads``, found with
ctypes in the OpenBLAS library that NumPy loaded, and restored after each product;
with another BLAS, or on a GPU, ``matmul`` is plain ``xp.matmul``. The setting is
process-wide, so a product that another Python thread runs at the same moment may
also run on one thread; its result is the same.

On a quiet machine OpenBLAS's own threads can be faster for small products (ResNet-50
forward at batch 1 on 2 idle cores: 114 ms with the engine before this policy, 171 ms
with it; on shared cores 813 ms before and 201 ms with it; docs/benchmarks.md):
``with using_config('blas_threading', 'openblas'):`` leaves every product to OpenBLAS.

>>> import numpy as np
>>> matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).shape
(2, 4)
"""

import ctypes
import glob
import itertools
import os
import threading
from concurrent import futures

import numpy

from cvzoo.core import backend, config

# Products of fewer floating-point operations (2 * M * K * N) run on one BLAS thread.
SINGLE_THREAD_FLOPS = 2 ** 29
# A larger product is cut into about this many blocks per thread, none narrower than
# MIN_BLOCK rows or columns (narrower blocks lose BLAS efficiency).
BLOCKS_PER_THREAD = 3
MIN_BLOCK = 128

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
    control = thread_control()
    n_threads = control.get() if control is not None else 1
    if n_threads <= 1:
        return numpy.matmul(a, b, out=out)
    blocks = None
    if flops >= SINGLE_THREAD_FLOPS:
        if a.ndim == b.ndim == 2:
            blocks = _blocks(a.shape[0], b.shape[1], n_threads)
        if blocks is None or len(blocks) < 2:
            return numpy.matmul(a, b, out=out)  # OpenBLAS's own threads
    control.set(1)
    try:
        if blocks is None:
            return numpy.matmul(a, b, out=out)
        return _blocked_matmul(a, b, out, blocks, n_threads)
    finally:
        control.set(n_threads)


def _blocks(m, n, n_threads):
    """Cut the longer axis of an (m, n) result: [(axis, start, stop), ...]."""
    axis, length = (0, m) if m > n else (1, n)
    count = max(1, min(BLOCKS_PER_THREAD * n_threads, length // MIN_BLOCK))
    step = -(-length // count)
    return [(axis, start, min(start + step, length)) for start in range(0, length, step)]


class _BlockedProduct:
    """One product cut into blocks; any thread may call run() to take blocks."""

    def __init__(self, a, b, out, blocks):
        self.a, self.b, self.out, self.blocks = a, b, out, blocks
        self._next = itertools.count()  # next() on it is atomic under the GIL
        self._lock = threading.Lock()
        self._pending = len(blocks)
        self._error = None
        self.finished = threading.Event()

    def run(self):
        for index in self._next:
            if index >= len(self.blocks):
                return
            try:
                axis, start, stop = self.blocks[index]
                if axis == 0:
                    numpy.matmul(self.a[start:stop], self.b, out=self.out[start:stop])
                else:
                    numpy.matmul(self.a, self.b[:, start:stop], out=self.out[:, start:stop])
            except BaseException as error:  # noqa: BLE001 - handed to the caller
                self._error = self._error or error
            finally:
                with self._lock:
                    self._pending -= 1
                    if self._pending == 0:
                        self.finished.set()

    def result(self):
        self.finished.wait()
        if self._error is not None:
            raise self._error
        return self.out


_pool = None
_pool_size = 0
_pool_lock = threading.Lock()


def _helpers(n_helpers):
    """A pool of at least ``n_helpers`` threads, made once (and again after a fork)."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < n_helpers:
            _pool = futures.ThreadPoolExecutor(n_helpers, thread_name_prefix='cvzoo-gemm')
            _pool_size = n_helpers
        return _pool


def _forget_pool():
    # NOTE: a forked child has none of the parent's threads; its first big product makes
    # a new pool. (Until then nothing would be lost anyway: the caller takes every block
    # that no helper took.)
    global _pool, _pool_size, _pool_lock
    _pool, _pool_size, _pool_lock = None, 0, threading.Lock()


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_forget_pool)


def _blocked_matmul(a, b, out, blocks, n_threads):
    if out is None:
        out = numpy.empty((a.shape[0], b.shape[1]), dtype=numpy.result_type(a, b))
    elif out.shape != (a.shape[0], b.shape[1]):
        return numpy.matmul(a, b, out=out)  # let NumPy name the mismatch
    product = _BlockedProduct(a, b, out, blocks)
    pool = _helpers(n_threads - 1)
    for _ in range(n_threads - 1):
        pool.submit(product.run)
    product.run()
    return product.result()
