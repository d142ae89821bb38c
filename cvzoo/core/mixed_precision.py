"""Mixed precision: ``autocast(dtype)`` and the casting rules the functions follow under it.

Inside ``with cvzoo.core.autocast('bfloat16'):`` (or ``'float16'``) the functions fall
into three groups, as in PyTorch's autocast op lists:

- **low precision** (:data:`LOW_PRECISION_FUNCTIONS`): F.convolution_2d,
  F.deconvolution_2d (and the convolutions built on them), F.linear and F.matmul cast
  their float inputs (float64 excepted) to the low dtype and return the low dtype;
- **float32** (:data:`FLOAT32_FUNCTIONS`): normalizations, softmax, the losses, the
  sum and mean reductions, and resize_images (products NumPy has no bfloat16 kernel
  for) cast low-precision inputs to float32 and return float32;
- **widest input** (:data:`PROMOTE_FUNCTIONS`): F.add, F.sub, F.mul, F.div and F.concat
  cast their float operands to the widest of their dtypes, so that a bfloat16 activation
  meets a float32 one without an error;
- every other function runs in the dtype it is given (relu, pooling, reshape, ...).

The casts are ``F.cast`` nodes, so gradients flow back through them into each input's
own dtype: float32 parameters ("master weights") get float32 gradients, and the
optimizer runs in float32. ``backward()`` runs with autocast off; the backward of a
function computes in the dtypes its forward saw.

On NumPy (the CPU), a low-precision product is emulated: the inputs, already rounded to
the low dtype, are widened to float32, the product runs in float32 BLAS, and its result is
rounded to the low dtype (:func:`compute_in_float32_on_host`). GPUs accumulate in float32
as well (cuBLAS), so only the speed differs. bfloat16 arrays are ``ml_dtypes.bfloat16``
(``pip install ml_dtypes``); on a GPU they need a CuPy that carries that dtype.
"""

import numpy

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.config import config, using_config

LOW_PRECISION_FUNCTIONS = ('convolution_2d', 'deconvolution_2d', 'linear', 'matmul')
FLOAT32_FUNCTIONS = (
    'absolute_error', 'batch_normalization', 'fixed_batch_normalization',
    'group_normalization', 'huber_loss', 'layer_normalization', 'log_softmax', 'mean',
    'mean_squared_error', 'resize_images', 'sigmoid_cross_entropy', 'smooth_l1_loss',
    'softmax', 'softmax_cross_entropy', 'sum',
)
PROMOTE_FUNCTIONS = ('add', 'concat', 'div', 'mul', 'sub')

AUTOCAST_DTYPES = ('bfloat16', 'float16')  # the dtypes autocast computes in


def _bfloat16():
    try:
        import ml_dtypes  # noqa: PLC0415 - optional, needed only for bfloat16
    except ImportError:
        raise errors.UsageError(
            "autocast: dtype 'bfloat16' needs the ml_dtypes package "
            "(pip install ml_dtypes, or pip install 'cvzoo[mixed]')") from None
    return numpy.dtype(ml_dtypes.bfloat16)


def low_precision_dtype(dtype) -> numpy.dtype:
    """The NumPy dtype of an autocast ``dtype``: 'bfloat16' or 'float16', or their dtypes.

    Raises:
        UsageError: any other dtype, naming ``dtype``.
    """
    name = dtype if isinstance(dtype, str) else getattr(dtype, '__name__', None)
    if name is None:
        name = getattr(dtype, 'name', None)
    if name not in AUTOCAST_DTYPES:
        raise errors.UsageError(
            "autocast: dtype must be 'bfloat16' or 'float16' (or numpy.float16, "
            f'ml_dtypes.bfloat16), got {dtype!r}')
    return _bfloat16() if name == 'bfloat16' else numpy.dtype(numpy.float16)


def autocast(dtype, enabled=True):
    """Run the convolutions and matrix products of the block in ``dtype`` (mixed precision).

    The rules are in this module's docstring. Nestable; each thread has its own setting
    (like every ``cvzoo.core.config`` field); ``enabled=False`` switches autocast off in an
    inner block.

    Args:
        dtype: ``'bfloat16'``, ``'float16'``, ``numpy.float16`` or ``ml_dtypes.bfloat16``.
        enabled (bool): False runs the block in the inputs' own dtypes.

    Returns:
        a context manager.

    Raises:
        UsageError: another dtype.

    >>> import numpy as np
    >>> import cvzoo.core.functions as F
    >>> x, W = np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)
    >>> with autocast('float16'):
    ...     F.linear(x, W).dtype
    dtype('float16')
    """
    low = low_precision_dtype(dtype)
    return using_config('autocast', low if enabled else None)


def _cast(x, dtype):
    from cvzoo.core.functions.array import cast  # noqa: PLC0415 - functions import this module

    return cast.cast(x, dtype)


def _is_castable(x):
    """A float input autocast may cast: float64 stays float64, as in PyTorch."""
    return (x is not None and backend.is_float_dtype(x.dtype)
            and numpy.dtype(x.dtype) != numpy.float64)


def cast_to_low_precision(*inputs):
    """Under autocast, the float inputs cast to its dtype (Variables); else unchanged.

    None entries stay None. Used by the functions of LOW_PRECISION_FUNCTIONS.
    """
    low = config.autocast
    if low is None:
        return inputs
    return tuple(_cast(x, low) if _is_castable(x) and x.dtype != low else x for x in inputs)


def cast_to_float32(*inputs):
    """Under autocast, float16 and bfloat16 inputs cast to float32; else unchanged.

    Used by the functions of FLOAT32_FUNCTIONS.
    """
    if config.autocast is None:
        return inputs
    return tuple(_cast(x, numpy.float32) if _is_castable(x) and x.dtype.itemsize < 4 else x
                 for x in inputs)


def promote(*inputs):
    """Under autocast, float inputs of differing dtypes cast to the widest; else unchanged.

    float16 meeting bfloat16 gives float32 (neither holds the other). Used by the
    functions of PROMOTE_FUNCTIONS; numbers and non-float arrays are left alone.
    """
    if config.autocast is None:
        return inputs
    dtypes = {numpy.dtype(x.dtype) for x in inputs if hasattr(x, 'dtype')
              and backend.is_float_dtype(x.dtype)}
    if len(dtypes) < 2:
        return inputs
    widest = max(dtypes, key=lambda d: d.itemsize)
    if widest.itemsize == 2:
        widest = numpy.dtype(numpy.float32)
    return tuple(_cast(x, widest) if hasattr(x, 'dtype') and x.dtype in dtypes
                 and x.dtype != widest else x for x in inputs)


def compute_in_float32_on_host(forward, inputs):
    """Run ``forward(inputs)`` in float32 when its inputs are float16/bfloat16 NumPy arrays.

    NumPy has no fast half-precision product (float16 loops are not BLAS, and bfloat16
    has none), so on the CPU a product of low-precision arrays is emulated: the values
    (already rounded to the low dtype) are widened to float32, ``forward`` runs in float32,
    and each float output is rounded back to the low dtype. Device arrays and other dtypes
    go to ``forward`` as they are.

    Args:
        forward: a callable on a tuple of arrays returning a tuple of arrays.
        inputs (tuple of arrays): the arrays of one FunctionNode.forward.

    Returns:
        tuple of arrays: ``forward``'s outputs, in the low dtype.
    """
    for x in inputs:  # NOTE: a plain loop: float32 inputs leave after no Python call
        if x.dtype.itemsize == 2:
            break
    else:
        return forward(inputs)
    low = {numpy.dtype(x.dtype) for x in inputs if x.dtype.itemsize == 2
           and backend.is_float_dtype(x.dtype)}
    if not low or backend.get_array_module(*inputs) is not numpy:
        return forward(inputs)
    low, = low  # the functions using this check that their inputs share a dtype
    wide = tuple(x.astype(numpy.float32) if x.dtype == low else x for x in inputs)
    outputs = forward(wide)
    # NOTE: a float16 overflow gives inf, as on a GPU, silently: LossScaler handles it.
    with numpy.errstate(over='ignore'):
        return tuple(y.astype(low) if y.dtype == numpy.float32 else y for y in outputs)
