"""Share one NumPy pass among a few threads: the engine's memory-bound work on the CPU.

NumPy releases the GIL inside its ufunc loops, copies, reductions and BLAS calls, so
threads that each take a slice of an array run at the same time. This module cuts
such a pass into tasks that the calling thread and ``thread_count() - 1`` helper
threads take from a shared counter. A helper that the OS does not schedule (a busy
machine) takes no task and the caller does the rest itself; only a helper stopped in
the middle of a task makes the caller wait, for that one task. An idle core takes its
share. Measured on ResNet-50 at
batch 8 on 2 cores, the passes outside matmul (patch copies, batch norm, relu, adds)
were a third of a forward pass, all of it on one core (docs/benchmarks.md).

The thread count is the one the user gave OpenBLAS (``OPENBLAS_NUM_THREADS``, or the
usable cores), so ``OPENBLAS_NUM_THREADS=1`` keeps the whole engine on one thread.

>>> import numpy as np
>>> x = np.arange(-4.0, 4.0).reshape(2, 4)
>>> out = np.empty_like(x)
>>> elementwise(lambda o, a: np.maximum(a, 0, out=o), out, x, min_elements=1)
>>> out
array([[0., 0., 0., 0.],
       [0., 1., 2., 3.]])
"""

import itertools
import os
import threading
from concurrent import futures

import numpy

# Arrays of fewer elements are done on the calling thread: measured on ResNet-50 (2 cores),
# 2^18 and 2^20 alike at batch 1 and 8, 2^16 4% slower at batch 1 (hand-offs cost more
# than they save on small arrays).
MIN_ELEMENTS = 1 << 18
# Tasks of about this many elements (1 MiB of float32): a task that makes several
# passes over its slice finds it still in the core's cache on the second pass.
TASK_ELEMENTS = 1 << 18

_local = threading.local()
_pool = None
_pool_size = 0
_pool_lock = threading.Lock()


def thread_count():
    """How many threads a pass may use: OpenBLAS's thread count, else the usable cores.

    Inside a task (a helper thread, or the caller while it runs tasks) this is 1, so
    that work started by a task does not hand off again.
    """
    if getattr(_local, 'in_task', False):
        return 1
    return _configured_count()


def _configured_count():
    from cvzoo.core import gemm  # gemm imports this module

    control = gemm.thread_control()
    if control is not None:
        return max(1, gemm.configured_threads())
    for name in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS'):
        value = os.environ.get(name, '')
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else 1


class _SharedTasks:
    """Tasks that any thread may take by calling run(); the caller waits with result()."""

    def __init__(self, tasks):
        self.tasks = tasks
        self._next = itertools.count()  # next() on it is atomic under the GIL
        self._lock = threading.Lock()
        self._pending = len(tasks)
        self._error = None
        self.finished = threading.Event()

    def run(self):
        _local.in_task = True
        try:
            for index in self._next:
                if index >= len(self.tasks):
                    return
                try:
                    self.tasks[index]()
                except BaseException as error:  # noqa: BLE001 - handed to the caller
                    self._error = self._error or error
                finally:
                    with self._lock:
                        self._pending -= 1
                        if self._pending == 0:
                            self.finished.set()
        finally:
            _local.in_task = False

    def result(self):
        self.finished.wait()
        if self._error is not None:
            raise self._error


def _helpers(n_helpers):
    """A pool of at least ``n_helpers`` threads, made once (and again after a fork)."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < n_helpers:
            _pool = futures.ThreadPoolExecutor(n_helpers, thread_name_prefix='cvzoo-worker')
            _pool_size = n_helpers
        return _pool


def _forget_pool():
    # NOTE: a forked child has none of the parent's threads; its first shared pass makes
    # a new pool.
    global _pool, _pool_size, _pool_lock
    _pool, _pool_size, _pool_lock = None, 0, threading.Lock()


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_forget_pool)


def run(tasks, n_threads=None):
    """Call every zero-argument callable in ``tasks``, sharing them among threads.

    Args:
        tasks (list of callable): independent pieces of work (no order among them).
        n_threads (int or None): threads to use, the caller included; default
            thread_count().

    Raises:
        The first exception a task raised, after every task has ended.
    """
    n_threads = thread_count() if n_threads is None else n_threads
    if n_threads <= 1 or len(tasks) <= 1:
        for task in tasks:
            task()
        return
    shared = _SharedTasks(tasks)
    pool = _helpers(n_threads - 1)
    for _ in range(min(n_threads, len(tasks)) - 1):
        pool.submit(shared.run)
    shared.run()
    shared.result()


def outer_axis(array):
    """The axis of ``array`` with the largest stride (cutting it keeps slices compact)."""
    sizes_and_strides = [(abs(stride), axis) for axis, (size, stride)
                         in enumerate(zip(array.shape, array.strides)) if size > 1]
    return max(sizes_and_strides)[1] if sizes_and_strides else 0


def ranges(length, item_elements, n_threads=None):
    """Cut ``range(length)`` into [(start, stop), ...] for tasks of about TASK_ELEMENTS.

    Args:
        length (int): the number of items (e.g. channels) to share out.
        item_elements (int): the array elements one item holds.
        n_threads (int or None): at least this many ranges when there are as many items;
            default thread_count().

    Returns:
        list of (int, int): consecutive ranges covering ``range(length)``.
    """
    n_threads = thread_count() if n_threads is None else n_threads
    n_tasks = min(length, max(n_threads, -(-length * item_elements // TASK_ELEMENTS)))
    step = -(-length // max(n_tasks, 1))
    return [(start, min(start + step, length)) for start in range(0, length, step)]


def elementwise(func, out, *operands, min_elements=None, axis=None):
    """``func(out_part, *operand_parts)`` on slices of ``out`` cut along one axis.

    Only for NumPy arrays; ``func`` must write its slice of ``out`` and nothing else.

    Args:
        func (callable): called once per slice; its result is ignored.
        out (numpy.ndarray): the array the pass writes.
        operands (numpy.ndarray or scalar): read by ``func``; an array of ``out``'s ndim
            is cut like ``out`` where its size on the cut axis equals out's (a size-1,
            broadcast axis is passed whole); anything else is passed whole.
        min_elements (int or None): below this size the pass runs on the calling
            thread; default MIN_ELEMENTS.
        axis (int or None): the axis to cut; default outer_axis(out).
    """
    min_elements = MIN_ELEMENTS if min_elements is None else min_elements
    n_threads = thread_count() if out.size >= min_elements else 1
    if n_threads <= 1 or out.ndim == 0:
        func(out, *operands)
        return
    axis = outer_axis(out) if axis is None else axis
    length = out.shape[axis]

    def cut(array, start, stop):
        if (isinstance(array, numpy.ndarray) and array.ndim == out.ndim
                and array.shape[axis] == length):
            index = (slice(None),) * axis + (slice(start, stop),)
            return array[index]
        return array

    def task(start, stop):
        return lambda: func(*(cut(a, start, stop) for a in (out,) + operands))

    run([task(start, stop) for start, stop in ranges(length, out.size // length, n_threads)],
        n_threads)


def by_slices(func, outputs, inputs, axis, min_elements=None):
    """Fill ``outputs`` slice by slice along ``axis``, the slices shared among threads.

    For work that is independent along one axis (channels, images) but not elementwise:
    ``outputs[k][s] = func(*(a[s] for a in inputs))[k]`` for slices ``s`` of ``axis``.

    Args:
        func (callable): takes slices of ``inputs``, returns a tuple of arrays, one per
            output, each the matching slice's shape.
        outputs (tuple of numpy.ndarray): written; all have the same size on ``axis``.
        inputs (tuple of numpy.ndarray): read; cut on ``axis`` like the outputs.
        axis (int): the independent axis.
        min_elements (int or None): below this input size the work is one call on
            this thread; default MIN_ELEMENTS.
    """
    min_elements = MIN_ELEMENTS if min_elements is None else min_elements
    length = outputs[0].shape[axis]
    size = sum(a.size for a in inputs)
    n_threads = thread_count() if size >= min_elements else 1
    spans = [(0, length)] if n_threads <= 1 else ranges(length, size // max(length, 1),
                                                          n_threads)

    def task(start, stop):
        index = (slice(None),) * axis + (slice(start, stop),)

        def fill():
            for out, result in zip(outputs, func(*(a[index] for a in inputs))):
                out[index] = result
        return fill

    run([task(start, stop) for start, stop in spans], n_threads)


def copy(out, source, min_elements=None):
    """``out[...] = source`` (same shape), the copy shared among threads."""
    elementwise(numpy.copyto, out, source, min_elements=min_elements)


def add(a, b):
    """``a + b``; two NumPy arrays of one shape are added by several threads."""
    if type(a) is not numpy.ndarray or type(b) is not numpy.ndarray or a.shape != b.shape:
        return a + b
    out = numpy.empty_like(a, dtype=numpy.result_type(a, b))
    elementwise(lambda out, a, b: numpy.add(a, b, out=out), out, a, b)
    return out
