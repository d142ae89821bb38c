"""MultiprocessIterator: load and transform examples in worker processes, batches prefetched.

The main process decides the order exactly as SerialIterator does (same seed, same
batches) and sends the indexes of each batch to a pool of workers; the workers call
``dataset[i]`` (reading, decoding, augmenting) and send the example back. Arrays of at
least ``shared_mem`` bytes travel through ``multiprocessing.shared_memory`` (one copy in,
one copy out) instead of being pickled through a pipe.
"""

import atexit
import collections
import contextlib
import glob
import multiprocessing
import os
import signal
import uuid
import weakref
from multiprocessing import resource_tracker, shared_memory

import numpy

from cvzoo.core.training.iterators import serial_iterator

DEFAULT_SHARED_MEM = 64 * 1024  # bytes; smaller arrays are cheaper to pickle

_worker_dataset = None
_worker_shared_mem = None
_worker_prefix = None


def _worker_init(dataset, shared_mem, prefix):
    global _worker_dataset, _worker_shared_mem, _worker_prefix
    # NOTE: Ctrl-C reaches the whole process group; only the main process handles it and
    # then shuts the workers down, so they ignore it instead of dying with tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_dataset, _worker_shared_mem, _worker_prefix = dataset, shared_mem, prefix


def _to_shared(array):
    name = f'{_worker_prefix}{uuid.uuid4().hex[:16]}'
    block = shared_memory.SharedMemory(name=name, create=True, size=max(array.nbytes, 1))
    numpy.ndarray(array.shape, array.dtype, buffer=block.buf)[...] = array
    block.close()
    # NOTE: the main process unlinks the block after copying it out; the worker must not.
    resource_tracker.unregister(block._name, 'shared_memory')
    return ('__shared__', name, array.shape, array.dtype.str)


def _pack(value):
    if isinstance(value, numpy.ndarray) and value.nbytes >= _worker_shared_mem:
        return _to_shared(numpy.ascontiguousarray(value))
    if isinstance(value, tuple):
        return tuple(_pack(v) for v in value)
    if isinstance(value, dict):
        return {key: _pack(v) for key, v in value.items()}
    return value


def _unpack(value):
    if isinstance(value, tuple) and len(value) == 4 and value[0] == '__shared__':
        block = shared_memory.SharedMemory(name=value[1])
        try:
            return numpy.ndarray(value[2], numpy.dtype(value[3]), buffer=block.buf).copy()
        finally:
            block.close()
            block.unlink()
    if isinstance(value, tuple):
        return tuple(_unpack(v) for v in value)
    if isinstance(value, dict):
        return {key: _unpack(v) for key, v in value.items()}
    return value


def _fetch(index):
    return _pack(_worker_dataset[index])


def _wait(result):
    """result.get(), waiting in short steps so that Ctrl-C is handled promptly."""
    while True:
        try:
            return result.get(timeout=0.2)
        except multiprocessing.TimeoutError:
            continue


class _Range:
    """The indexes 0..n-1 as a dataset, so SerialIterator computes the order."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context('fork' if 'fork' in methods else 'spawn')


def _shutdown(pool, prefix):
    """Stop the workers, wait for them, and free the blocks of abandoned batches."""
    pool.terminate()
    pool.join()
    for path in glob.glob(os.path.join('/dev/shm', glob.escape(prefix) + '*')):
        with contextlib.suppress(OSError):
            os.remove(path)


class MultiprocessIterator:
    """Yield lists of examples of ``batch_size``, loaded by worker processes.

    Same order, epoch accounting and ``serialize()`` keys as SerialIterator (a snapshot of
    one can be loaded into the other). Use ``finalize()`` or a ``with`` block to stop the
    workers; they are also stopped at interpreter exit, when a worker raises (the error is
    re-raised here with the worker's traceback as its cause) and on KeyboardInterrupt.

    Args:
        dataset: anything with ``len`` and integer indexing; picklable when the 'spawn'
            start method is used (platforms without 'fork').
        batch_size (int): examples per batch.
        repeat (bool): go on past the end (training) or stop after one pass.
        shuffle (bool): a new random order every epoch.
        n_processes (int or None): worker processes (default: the CPU count).
        n_prefetch (int): batches loaded ahead of the one being consumed.
        shared_mem (int or None): arrays of at least this many bytes go through shared
            memory (default 64 KiB).
        seed (int or None): seed of the shuffling (as SerialIterator's).
    """

    def __init__(self, dataset, batch_size, repeat=True, shuffle=True, n_processes=None,
                 n_prefetch=1, shared_mem=None, seed=None):
        if n_processes is not None and int(n_processes) < 1:
            raise ValueError(f'n_processes: expected a positive int or None, got {n_processes}')
        if int(n_prefetch) < 1:
            raise ValueError(f'n_prefetch: expected a positive int, got {n_prefetch}')
        self.dataset = dataset
        self.batch_size = batch_size
        self.n_processes = int(n_processes or os.cpu_count() or 1)
        self.n_prefetch = int(n_prefetch)
        self.shared_mem = DEFAULT_SHARED_MEM if shared_mem is None else int(shared_mem)
        self._indexes = serial_iterator.SerialIterator(
            _Range(len(dataset)), batch_size, repeat, shuffle, seed)
        self._view = serial_iterator.SerialIterator(_Range(len(dataset)), batch_size, repeat,
                                                    shuffle)
        self._view.set_state(self._indexes.get_state())
        self._pending = collections.deque()  # (async result, state after the batch)
        self._exhausted = False
        self._pool = None
        self._prefix = f'cvzoo_{os.getpid()}_{uuid.uuid4().hex[:8]}_'
        self._finalizer = None

    # --- epoch accounting: the state after the last batch handed out ---

    epoch = property(lambda self: self._view.epoch)
    is_new_epoch = property(lambda self: self._view.is_new_epoch)
    epoch_detail = property(lambda self: self._view.epoch_detail)
    previous_epoch_detail = property(lambda self: self._view.previous_epoch_detail)
    current_position = property(lambda self: self._view.current_position)
    repeat = property(lambda self: self._view.repeat)

    def __iter__(self):
        return self

    def __next__(self):
        if self._pool is None:
            self._start()
        self._fill()
        if not self._pending:
            raise StopIteration
        result, state = self._pending.popleft()
        try:
            examples = _wait(result)
        except BaseException:
            self.finalize()
            raise
        self._view.set_state(state)
        self._fill()
        return [_unpack(example) for example in examples]

    next = __next__

    def _start(self):
        context = _context()
        self._pool = context.Pool(self.n_processes, _worker_init,
                                  (self.dataset, self.shared_mem, self._prefix))
        self._finalizer = weakref.finalize(self, _shutdown, self._pool, self._prefix)
        atexit.register(self._finalizer)

    def _fill(self):
        while len(self._pending) < self.n_prefetch + 1 and not self._exhausted:
            try:
                indexes = next(self._indexes)
            except StopIteration:
                self._exhausted = True
                return
            result = self._pool.map_async(_fetch, indexes, chunksize=1)
            self._pending.append((result, self._indexes.get_state()))

    def _discard_pending(self):
        """Wait for the batches in flight and free their shared memory."""
        while self._pending:
            result, _ = self._pending.popleft()
            # the batch is thrown away, and with it any error it raised
            with contextlib.suppress(Exception):
                for example in result.get():
                    _unpack(example)
        self._exhausted = False

    def reset(self):
        """Go back to the start of the first epoch (the shuffling state goes on)."""
        self._discard_pending()
        self._indexes.reset()
        self._view.set_state(self._indexes.get_state())

    def serialize(self, serializer):
        """Save or load the state after the last batch handed out (SerialIterator's keys)."""
        self._view.serialize(serializer)
        self._discard_pending()
        self._indexes.set_state(self._view.get_state())

    def finalize(self):
        """Stop the worker processes (idempotent); the iterator can start them again."""
        self._pending.clear()
        self._exhausted = False
        self._indexes.set_state(self._view.get_state())
        if self._finalizer is not None:
            self._finalizer()
            atexit.unregister(self._finalizer)
        self._pool = None
        self._finalizer = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.finalize()
        return False
