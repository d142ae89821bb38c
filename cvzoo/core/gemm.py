"""matmul for the engine's hot paths: small CPU products run on one BLAS thread.

OpenBLAS splits every product over all its threads. For a product of a few hundred
MFLOP the threads' synchronisation costs more than it saves, and when the other cores
are busy (a shared machine) a thread that waits for a descheduled sibling makes the
product several times slower: measured on 2 shared cores, ResNet-50 at batch 1 ran 3.6
times faster on one BLAS thread than on two. ``matmul`` therefore caps OpenBLAS at one
thread for products below SINGLE_THREAD_FLOPS and leaves larger ones to the thread
count the user chose (``OPENBLAS_NUM_THREADS``).

The cap works through OpenBLAS's own ``openblas_set_num_threads``, found with ctypes in
the OpenBLAS library that NumPy loaded; with another BLAS, or on a GPU, ``matmul`` is
plain ``xp.matmul``. The thread count is process-wide, so a product that another Python
thread runs at the same moment may also run on one thread; the result is the same.

>>> import numpy as np
>>> matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).shape
(2, 4)
"""

import ctypes
import glob
import os

import numpy

from cvzoo.core import backend

# Products of fewer floating-point operations (2 * M * K * N) run on one BLAS thread.
SINGLE_THREAD_FLOPS = 2 ** 29

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
    """``xp.matmul(a, b, out=out)``, on one BLAS thread when the product is small.

    Args:
        a (array): (..., M, K).
        b (array): (..., K, N), on a's device.
        out (array or None): where to write the (..., M, N) result.

    Returns:
        array: the product (``out`` when given).
    """
    xp = backend.get_array_module(a, b)
    if xp is not numpy or a.ndim < 2 or b.ndim < 2:
        return xp.matmul(a, b, out=out)
    batch = max(a.size // max(a.shape[-2] * a.shape[-1], 1),
                b.size // max(b.shape[-2] * b.shape[-1], 1))
    flops = 2 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1]
    control = thread_control() if flops < SINGLE_THREAD_FLOPS else None
    n_threads = control.get() if control is not None else 1
    if n_threads <= 1:
        return numpy.matmul(a, b, out=out)
    control.set(1)
    try:
        return numpy.matmul(a, b, out=out)
    finally:
        control.set(n_threads)
