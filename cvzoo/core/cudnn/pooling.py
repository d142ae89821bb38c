"""cuDNN pooling forward (max and average), through libcudnn's own pooling call.

The frontend's Python graph API has no pooling operation, so this module calls
``cudnnPoolingForward`` of libcudnn (the library the frontend loads) by ctypes, on the
handle and stream of ``plans``. Only the forward runs here: the backward of average
pooling, and max pooling whenever its winners are needed (training: the backward gathers
through them), stay on CuPy. Windows are symmetric in cuDNN, so a cover_all window
that hangs over the edge (an output larger than floor's) takes the CuPy path.
"""

import ctypes
import importlib.util
import os

import numpy

from cvzoo.core import backend
from cvzoo.core.cudnn import availability, plans

# cudnnPoolingMode_t, cudnnDataType_t, cudnnNanPropagation_t
MAX, AVERAGE_INCLUDE_PADDING, AVERAGE_EXCLUDE_PADDING = 0, 1, 2
_DATA_TYPES = {numpy.dtype(numpy.float32): 0, numpy.dtype(numpy.float16): 2}
_NOT_PROPAGATE_NAN = 0
_NOT_LOADED = object()
_library = _NOT_LOADED


class CtypesPooling:
    """``pooling_forward`` over libcudnn's cudnnPoolingForward (one call, own descriptors)."""

    def __init__(self, lib):
        self.lib = lib

    def _check(self, status, what):
        if status != 0:
            raise RuntimeError(f'cvzoo.core.cudnn: {what} failed with cudnnStatus_t {status}')

    def _tensor(self, spec):
        _, dims, strides, dtype = spec
        desc = ctypes.c_void_p()
        self._check(self.lib.cudnnCreateTensorDescriptor(ctypes.byref(desc)),
                    'cudnnCreateTensorDescriptor')
        self._check(self.lib.cudnnSetTensor4dDescriptorEx(
            desc, _DATA_TYPES[numpy.dtype(dtype)], *map(int, dims), *map(int, strides)),
            'cudnnSetTensor4dDescriptorEx')
        return desc

    def pooling_forward(self, handle, mode, window, x, y):
        """y = pool(x); window is (kh, kw, ph, pw, sh, sw), x and y are (pointer, dims,
        strides in elements, dtype)."""
        pool = ctypes.c_void_p()
        self._check(self.lib.cudnnCreatePoolingDescriptor(ctypes.byref(pool)),
                    'cudnnCreatePoolingDescriptor')
        x_desc = y_desc = None
        try:
            self._check(self.lib.cudnnSetPooling2dDescriptor(
                pool, mode, _NOT_PROPAGATE_NAN, *map(int, window)), 'cudnnSetPooling2dDescriptor')
            x_desc, y_desc = self._tensor(x), self._tensor(y)
            alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
            self._check(self.lib.cudnnPoolingForward(
                ctypes.c_void_p(handle), pool, ctypes.byref(alpha), x_desc,
                ctypes.c_void_p(x[0]), ctypes.byref(beta), y_desc, ctypes.c_void_p(y[0])),
                'cudnnPoolingForward')
        finally:
            for desc in (x_desc, y_desc):
                if desc is not None:
                    self.lib.cudnnDestroyTensorDescriptor(desc)
            self.lib.cudnnDestroyPoolingDescriptor(pool)


def _load_libcudnn():
    """libcudnn.so.9 (already loaded by the frontend), or None."""
    names = ['libcudnn.so.9']
    spec = importlib.util.find_spec('nvidia.cudnn') if importlib.util.find_spec(
        'nvidia') else None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        names.append(os.path.join(folder, 'lib', 'libcudnn.so.9'))
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def library():
    """The object whose ``pooling_forward`` runs cuDNN pooling, or None without libcudnn.

    A stand-in frontend (cvzoo.testing.cudnn_stand_in) brings its own.
    """
    global _library
    cudnn = availability.frontend()
    if cudnn is None:
        return None
    if getattr(cudnn, 'is_stand_in', False):
        return cudnn.pooling_library
    if _library is _NOT_LOADED:
        lib = _load_libcudnn()
        _library = None if lib is None else CtypesPooling(lib)
    return _library


def _pool(what, mode, x, window):
    insize = x.shape[2:]
    outsize = window.outsize(insize)
    floor = tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(
        insize, window.ksize, window.stride, window.pad))
    if (x.ndim != 4 or outsize != floor or any(p >= k for p, k in zip(window.pad, window.ksize))
            or not availability.should_use(what, x)):
        return None
    lib = library()
    if lib is None:
        return None
    cupy = backend.get_array_module(x)
    y = cupy.empty(x.shape[:2] + outsize, dtype=x.dtype)
    handle = plans.current_handle(cupy)
    params = window.ksize + window.pad + window.stride
    lib.pooling_forward(handle, mode, params, _spec(x), _spec(y))
    plans.counts['executions'] += 1
    return y


def _spec(array):
    _, strides, dtype = plans.spec(array)
    return array.data.ptr, array.shape, strides, dtype


def max_pool(x, window):
    """Max pooling forward on cuDNN (padded cells never win); None off cuDNN."""
    return _pool('max_pooling_2d', MAX, x, window)


def average_pool(x, window, pad_value):
    """Average pooling forward on cuDNN: pad_value 0 divides by kh * kw, None by the cells
    inside the input; None off cuDNN."""
    mode = AVERAGE_INCLUDE_PADDING if pad_value is not None else AVERAGE_EXCLUDE_PADDING
    return _pool('average_pooling_2d', mode, x, window)
