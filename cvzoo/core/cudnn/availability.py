"""Whether a cuDNN call is made: the frontend's import check and the ``use_cudnn`` switch."""

import importlib
import sys

import numpy

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.config import config

_MODES = ('auto', 'always', 'never')
# dtypes the frontend's graphs take for these operations; float64 has no graph engine
SUPPORTED_DTYPES = frozenset(numpy.dtype(t) for t in ('float16', 'float32'))
_NOT_LOADED = object()
_frontend = _NOT_LOADED
# NOTE: (sys.modules['cupy'], what frontend() answered for it): every convolution and
# batch normalisation asks, and the answer changes only with the stand-in's installation
# or forget_frontend()
_answer = (None, None)


def frontend():
    """The ``cudnn`` frontend module, or None when it (or libcudnn under it) cannot load.

    Imported on the first call only, never at cvzoo's import. Under the CuPy stand-in only
    a stand-in frontend counts (a real one would be handed host pointers).
    """
    global _answer
    cupy = sys.modules.get('cupy')
    if _frontend is not _NOT_LOADED and _answer[0] is cupy:
        return _answer[1]
    module = _loaded_frontend()
    if _is_stand_in(cupy) and not _is_stand_in(module):
        module = None
    _answer = (cupy, module)
    return module


def _loaded_frontend():
    """The ``cudnn`` module, imported on the first call, or None when it cannot load."""
    global _frontend
    if _frontend is _NOT_LOADED:
        try:
            _frontend = importlib.import_module('cudnn')
        except (ImportError, OSError):
            _frontend = None
    return _frontend


def _is_stand_in(module):
    return bool(getattr(module, 'is_stand_in', False))


def forget_frontend():
    """Import ``cudnn`` afresh on the next call of :func:`frontend` (tests install one)."""
    global _frontend
    _frontend = _NOT_LOADED


def _mode():
    mode = config.use_cudnn
    if mode not in _MODES:
        raise errors.UsageError(
            f"config 'use_cudnn' must be one of {', '.join(map(repr, _MODES))}, "
            f'got {mode!r}')
    return mode


def should_use(what, *arrays):
    """True when ``what`` (a function's name) runs on cuDNN for these arrays.

    Never for NumPy arrays or with ``use_cudnn='never'``; with 'auto' when the frontend
    imports and the arrays are float16/float32 (others take the im2col/CuPy path); with
    'always' the same, but a missing frontend is a UsageError.

    Raises:
        UsageError: ``use_cudnn`` is not one of 'auto', 'always', 'never', or it is
            'always' and the ``cudnn`` frontend cannot be imported.
    """
    mode = config.use_cudnn
    if mode != 'auto':
        mode = _mode()  # checked here only: 'auto' is the default
    if mode == 'never' or backend.get_array_module(*arrays) is numpy:
        return False
    if frontend() is None:
        if mode == 'always':
            raise errors.UsageError(
                f"config 'use_cudnn' is 'always' but {what} cannot use cuDNN: the 'cudnn' "
                f"module (pip install nvidia-cudnn-frontend nvidia-cudnn-cu12) does not "
                f"import; set use_cudnn to 'auto' or 'never'")
        return False
    return all(numpy.dtype(a.dtype) in SUPPORTED_DTYPES for a in arrays)
