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

The thread count is read and lowered with threadpoolctl, on NumPy's own BLAS library
only (another BLAS in the process, torch's or SciPy's, is never touched), and only for
the duration of cvzoo's products: the first product that lowers it takes
``ThreadpoolController.limit(limits=1)`` and the last one to end restores the original
count, so outside cvzoo's calls ``threadpoolctl.threadpool_info()`` reads what the user
set. Without a BLAS that threadpoolctl can control, or on a GPU, ``matmul`` is plain
``xp.matmul``. NumPy's BLAS (OpenBLAS on its wheels) keeps one thread count for the
whole process, so a product that another Python thread runs at the same moment may
also run on one thread; its result is the same.

>>> import numpy as np
>>> matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).shape
(2, 4)
"""

import contextlib
import os
import threading

import numpy
import threadpoolctl

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


class _ThreadControl:
    """The thread count of NumPy's BLAS libraries, through a threadpoolctl controller."""

    def __init__(self, controller):
        self._controller = controller
        libs = controller.lib_controllers
        self._only = libs[0] if len(libs) == 1 else None

    def get(self):
        """The current thread count (the largest, should NumPy hold several BLAS)."""
        if self._only is not None:  # the usual case, read once per product: no generator
            return self._only.num_threads
        return max(lib.num_threads for lib in self._controller.lib_controllers)

    def limit(self, n_threads):
        """Set the thread count; return the limiter whose ``restore_original_limits()``
        sets back what was there before."""
        try:
            return self._controller.limit(limits=int(n_threads))
        finally:
            _release_control()


# NOTE: threadpoolctl (3.8) lets only one Python thread change a process-wide OpenBLAS
# pool (the first to try; the others are silently ignored) and frees it only at the end
# of a ``with`` block. cvzoo's limit may be taken in one thread and restored in another,
# so the mark is cleared after each change, which leaves users' threads free to set
# their own limits. Older threadpoolctl versions have no such mark.
_clear_controlling_thread = getattr(getattr(threadpoolctl, 'OpenBLASController', None),
                                    'clear_controlling_thread', None)


def _release_control():
    """Leave no thread marked as the one that controls OpenBLAS (see the note above)."""
    if _clear_controlling_thread is not None:
        _clear_controlling_thread()


def _numpy_blas_paths(lib_controllers):
    """The file paths among ``lib_controllers`` that NumPy ships (its wheels bundle one)."""
    numpy_dir = os.path.realpath(os.path.dirname(numpy.__file__))
    folders = (numpy_dir + os.sep, numpy_dir + '.libs' + os.sep)
    return [lib.filepath for lib in lib_controllers
            if os.path.realpath(lib.filepath).startswith(folders)]


def _find_control():
    controller = threadpoolctl.ThreadpoolController().select(user_api='blas')
    if not controller.lib_controllers:
        return None
    paths = _numpy_blas_paths(controller.lib_controllers)
    if paths:  # NOTE: a NumPy built on a system BLAS has none of its own; all are used.
        controller = controller.select(filepath=paths)
    return _ThreadControl(controller)


_control = None
_searched = False


def thread_control():
    """The BLAS thread control of NumPy in this process, or None (looked up once)."""
    global _control, _searched
    if not _searched:
        _control = _find_control()
        _searched = True
    return _control


_active = 0  # products running now with the BLAS held at one thread
_active_lock = threading.Lock()
_configured = None
_limiter = None  # threadpoolctl's limiter while _active > 0


def configured_threads():
    """The thread count the user gave NumPy's BLAS (1 without a BLAS control).

    While a product holds OpenBLAS at one thread, this is the count seen before, not 1.
    """
    global _configured
    control = thread_control()
    if control is None:
        return 1
    with _active_lock:
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
    # NOTE: one_blas_thread() written out: a generator context would add a few
    # microseconds to every product, small ones included.
    control = thread_control()
    if control is not None:
        _hold_one_thread(control)
    try:
        if blocks is None:
            return numpy.matmul(a, b, out=out)
        return _blocked_matmul(a, b, out, blocks, n_threads)
    finally:
        if control is not None:
            _release_one_thread()


@contextlib.contextmanager
def one_blas_thread():
    """Hold NumPy's BLAS at one thread inside the block (for work that threads itself).

    Nested and concurrent uses, in any threads, are counted: the first to enter takes
    threadpoolctl's limit, the last to leave restores the original count. Without a
    BLAS control this does nothing.
    """
    control = thread_control()
    if control is None:
        yield
        return
    _hold_one_thread(control)
    try:
        yield
    finally:
        _release_one_thread()


def _hold_one_thread(control):
    """Count one more user of the one-thread limit; the first takes it."""
    global _active, _configured, _limiter
    with _active_lock:
        if _active == 0:
            _configured = control.get()  # what configured_threads() reads meanwhile
            _limiter = control.limit(1)
        _active += 1


def _release_one_thread():
    """Count one user less; the last restores the original thread count."""
    global _active, _limiter
    with _active_lock:
        _active -= 1
        if _active == 0:
            try:
                _limiter.restore_original_limits()
            finally:
                _release_control()
                _limiter = None


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
