"""Run-time configuration: train/test mode and whether to record the graph.

The fields are read as ``config.train``, ``config.enable_backprop``, ``config.debug``,
``config.type_check``, ``config.blas_threading`` ('cvzoo' or 'openblas', see
``cvzoo.core.gemm``) and ``config.autocast`` (the low-precision dtype that
``cvzoo.core.autocast`` set, or None), and the cuDNN switches read by ``cvzoo.core.cudnn``:
``config.use_cudnn`` ('auto': cuDNN on CUDA arrays when its frontend imports, 'always':
the same but a UsageError when it cannot, 'never': the im2col/CuPy path),
``config.cudnn_benchmark`` (time every cuDNN plan once per shape key and keep the
fastest), ``config.cudnn_deterministic`` (only plans without atomics) and
``config.allow_tf32`` (cuDNN convolutions of float32 may use TF32 tensor cores; products
never do). Each thread sees the process-wide defaults until it
changes a field, and fields are changed only through the context managers below.

>>> with using_config('train', False):
...     config.train
False
>>> config.train
True
"""

import contextlib
import threading

_DEFAULTS = {
    'train': True,
    'enable_backprop': True,
    'debug': False,
    'type_check': True,
    # 'cvzoo': gemm.matmul's policy (one BLAS thread for small products, blocks on
    # threads for large ones); 'openblas': leave every product to OpenBLAS's own threads.
    'blas_threading': 'cvzoo',
    # None, or the numpy dtype (float16, bfloat16) that mixed_precision.autocast set
    'autocast': None,
    # cuDNN (cvzoo.core.cudnn): 'auto', 'always' or 'never'
    'use_cudnn': 'auto',
    'cudnn_benchmark': False,
    'cudnn_deterministic': False,
    # float32 convolutions on cuDNN may use TF32, as torch.backends.cudnn.allow_tf32
    'allow_tf32': True,
}


class _Config(threading.local):
    """Per-thread configuration, initialised from the defaults."""

    def __init__(self):
        self.__dict__.update(_DEFAULTS)

    def __setattr__(self, name, value):
        if name not in _DEFAULTS:
            raise AttributeError(f'unknown config field {name!r}; known: {sorted(_DEFAULTS)}')
        super().__setattr__(name, value)

    def __repr__(self):
        fields = ', '.join(f'{k}={getattr(self, k)!r}' for k in _DEFAULTS)
        return f'config({fields})'


config = _Config()


@contextlib.contextmanager
def using_config(name: str, value):
    """Set config field ``name`` to ``value`` inside the ``with`` block, then restore it.

    Args:
        name (str): one of ``train``, ``enable_backprop``, ``debug``, ``type_check``.
        value: the new value.
    """
    old = getattr(config, name) if name in _DEFAULTS else None
    setattr(config, name, value)
    try:
        yield
    finally:
        setattr(config, name, old)


def no_backprop_mode():
    """Context manager in which functions record no graph (inference, updates)."""
    return using_config('enable_backprop', False)


def force_backprop_mode():
    """Context manager in which functions record the graph even inside no_backprop_mode."""
    return using_config('enable_backprop', True)
