"""check_autocast: a function's outputs and gradients under ``cvzoo.core.autocast``.

Finite differences cannot check a function that rounds to 8 or 11 bits, so the reference
is the same function in float64 without autocast, on the same input values (a float64
gradient that ``check_function`` proves against finite differences); the autocast run
must match it within the format's tolerance, relative to the largest value of each array.

>>> import numpy as np
>>> import cvzoo.core.functions as F
>>> x, W = np.random.randn(3, 4), np.random.randn(5, 4)
>>> check_autocast(F.linear, (x, W), 'float16', devices=['cpu'])
"""

import numpy

from cvzoo.core import backend, backprop, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.testing import function_checks

# Largest error allowed, as a fraction of the largest |value| of the float64 reference:
# four units of the format's precision (bfloat16 keeps 8 significant bits, float16 11).
# Measured on the cases of tests/core/functions/test_autocast.py: about one unit.
AUTOCAST_TOLERANCE = {'bfloat16': 2.0 ** -6, 'float16': 2.0 ** -9}


def _variables(arrays, differentiate):
    return [variable_module.Variable(a, requires_grad=bool(d))
            for a, d in zip(arrays, differentiate)]


def _run(func, arrays, differentiate, grad_outputs, autocast_dtype=None):
    """func's outputs and the gradients of the differentiated inputs, as arrays."""
    xs = _variables(arrays, differentiate)
    if autocast_dtype is None:
        ys = function_checks._as_tuple(func(*xs))
    else:
        with mixed_precision.autocast(autocast_dtype):
            ys = function_checks._as_tuple(func(*xs))
    targets = [x for x, d in zip(xs, differentiate) if d]
    gys = [backend.to_device(g.astype(y.dtype), backend.get_device_from_array(y.array))
           for y, g in zip(ys, grad_outputs)]
    gxs = backprop.grad(list(ys), targets, gys)
    return [y.array for y in ys], [None if g is None else g.array for g in gxs]


def _compare(what, got, want, tolerance):
    got = backend.to_numpy(got).astype(numpy.float64)
    want = backend.to_numpy(want)
    scale = max(float(numpy.abs(want).max()) if want.size else 0.0, 1e-30)
    error = float(numpy.abs(got - want).max()) if want.size else 0.0
    if not error <= tolerance * scale:
        raise AssertionError(f'{what}: max abs error {error:.3g} is above {tolerance:.3g} '
                             f'of the largest reference value {scale:.3g}')


def _check_dtype(what, array, dtype):
    if numpy.dtype(array.dtype) != numpy.dtype(dtype):
        raise AssertionError(f'{what}: dtype {array.dtype}, expected {numpy.dtype(dtype)}')


def check_autocast(func, inputs, dtype, *, input_dtype=numpy.float32, output_dtype=None,
                   no_grads=None, tolerance=None, devices=None):
    """Check ``func`` under ``autocast(dtype)``: output dtypes, gradient dtypes and values.

    Args:
        func: callable on Variables returning a Variable or a tuple of them.
        inputs (tuple of arrays): one case; float ones are cast to ``input_dtype``
            (float32 for a function of mixed_precision.LOW_PRECISION_FUNCTIONS, whose
            inputs are float32 parameters; the low dtype for one of FLOAT32_FUNCTIONS,
            which meets low-precision activations).
        dtype: the autocast dtype, ``'bfloat16'`` or ``'float16'``.
        input_dtype: see ``inputs``; ``'low'`` means ``dtype``.
        output_dtype: the dtype every float output must have (default: ``dtype``).
        no_grads (tuple of bool): inputs not to differentiate.
        tolerance (float): override AUTOCAST_TOLERANCE[dtype].
        devices (list of str): default :func:`function_checks.devices_to_check`.

    Raises:
        AssertionError: an output of another dtype, a gradient not in its input's dtype,
            or a value off the float64 reference by more than the tolerance.
    """
    low = mixed_precision.low_precision_dtype(dtype)
    input_dtype = low if isinstance(input_dtype, str) and input_dtype == 'low' else input_dtype
    output_dtype = low if output_dtype is None else numpy.dtype(output_dtype)
    tolerance = AUTOCAST_TOLERANCE[low.name] if tolerance is None else tolerance
    arrays = [a.astype(input_dtype) if a.dtype.kind == 'f' else a
              for a in function_checks._as_tuple(inputs)]
    differentiate = [a.dtype.kind == 'f' and not (no_grads and no_grads[i])
                     for i, a in enumerate(inputs)]
    arrays64 = [a.astype(numpy.float64) if backend.is_float_dtype(a.dtype) else a
                for a in arrays]
    for device in devices or function_checks.devices_to_check():
        with backend.get_device(device):
            try:
                _check_on_device(func, arrays, arrays64, differentiate, low, output_dtype,
                                 tolerance, device)
            except AssertionError as exc:
                raise AssertionError(f'autocast {low.name} on {device}: {exc}') from exc


def _check_on_device(func, arrays, arrays64, differentiate, low, output_dtype, tolerance,
                     device):
    ys64, gxs64 = _run(func, function_checks._send(arrays64, device), differentiate,
                       _grad_outputs(func, arrays64, differentiate, device, low))
    gys = _grad_outputs(func, arrays64, differentiate, device, low)
    ys, gxs = _run(func, function_checks._send(arrays, device), differentiate, gys, low)
    for i, (y, y64) in enumerate(zip(ys, ys64)):
        if backend.is_float_dtype(y.dtype):
            _check_dtype(f'output {i}', y, output_dtype)
        _compare(f'output {i}', y, y64, tolerance)
    inputs = [a for a, d in zip(arrays, differentiate) if d]
    for i, (gx, gx64, x) in enumerate(zip(gxs, gxs64, inputs)):
        if gx is None or gx64 is None:
            raise AssertionError(f'gradient {i}: None (autocast: {gx is None})')
        _check_dtype(f'gradient {i}', gx, x.dtype)
        _compare(f'gradient {i}', gx, gx64, tolerance)


def _grad_outputs(func, arrays64, differentiate, device, low):
    """Seeded normal output gradients, rounded to the low dtype (the autocast run casts
    them to its outputs' dtypes), as float64 on ``device``."""
    shapes = [y.shape for y in function_checks._as_tuple(
        func(*_variables(function_checks._send(arrays64, device), differentiate)))]
    rng = numpy.random.RandomState(1)
    return [backend.to_device(rng.normal(size=s).astype(low).astype(numpy.float64), device)
            for s in shapes]
