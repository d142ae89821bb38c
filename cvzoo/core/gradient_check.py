"""Numerical gradient checks: compare a function's backward with finite differences.

``check_backward`` follows Chainer's method: one central difference along a random
direction checks every input at once (the directional derivative of <y, gy> must equal
sum(gx * direction)); for small inputs it also compares the full gradient element by
element, so a wrong entry cannot hide behind a lucky direction.

>>> import numpy as np
>>> import cvzoo.core.functions as F
>>> x = np.random.randn(3, 4)
>>> check_backward(F.exp, x, np.random.randn(3, 4))
"""

import numpy

from cvzoo.core import backend, backprop
from cvzoo.core import variable as variable_module


def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _is_float(array):
    return array is not None and array.dtype.kind == 'f'


def _outputs_as_arrays(func, arrays):
    # Inputs need no gradient, so no graph is recorded (unless func asks for one, as
    # the first-order function of check_double_backward does).
    ys = _as_tuple(func(*[variable_module.Variable(a, requires_grad=False) for a in arrays]))
    return [variable_module.as_array(y) for y in ys]


def _inner(ys, gys):
    """sum_k <y_k, gy_k> in float64 on the host, skipping outputs without a gradient."""
    total = 0.0
    for y, gy in zip(ys, gys):
        if gy is not None:
            y, gy = backend.to_numpy(y), backend.to_numpy(gy)
            total += float((y.astype(numpy.float64) * gy.astype(numpy.float64)).sum())
    return total


def numerical_grad(f, inputs, grad_outputs, eps=1e-3):
    """Central-difference gradient of <f(inputs), grad_outputs> for each input array.

    Args:
        f: callable taking no arguments and returning a tuple of arrays; it reads the
            arrays in ``inputs``, which this function perturbs in place and restores.
        inputs (tuple of arrays): float arrays to differentiate with respect to.
        grad_outputs (tuple of arrays or None): weights of the outputs.
        eps (float): step.

    Returns:
        tuple of arrays: d<f, gy>/dx, one per input (on the host).
    """
    result = []
    for x in inputs:
        host = backend.to_numpy(x)
        gx = numpy.zeros(x.shape, dtype=numpy.float64)
        for index in numpy.ndindex(x.shape):
            original = host[index].item()
            x[index] = original + eps
            plus = _inner([backend.to_numpy(y) for y in f()], grad_outputs)
            x[index] = original - eps
            minus = _inner([backend.to_numpy(y) for y in f()], grad_outputs)
            x[index] = original
            gx[index] = (plus - minus) / (2 * eps)
        result.append(gx)
    return tuple(result)


def _analytic(func, arrays, requires, params, grad_outputs):
    xs = [variable_module.Variable(a.copy(), requires_grad=r) for a, r in zip(arrays, requires)]
    ys = _as_tuple(func(*xs))
    targets = [x for x, r in zip(xs, requires) if r] + list(params)
    if grad_outputs is None:
        grad_outputs = [numpy.ones_like(variable_module.as_array(y)) for y in ys]
    gys = [None if g is None else variable_module.Variable(g, requires_grad=False)
           for g in grad_outputs]
    ys_used = [y for y, g in zip(ys, gys) if g is not None]
    gys_used = [g for g in gys if g is not None]
    gxs = backprop.grad(ys_used, targets, gys_used)
    return [None if g is None else backend.to_numpy(g.array) for g in gxs], grad_outputs


def check_backward(func, x_data, y_grad=None, params=(), eps=1e-3, atol=1e-5, rtol=1e-4,
                   no_grads=None, dtype=numpy.float64, full_jacobian_limit=256):
    """Check ``func``'s backward against central differences; raise AssertionError if off.

    Args:
        func: callable taking Variables and returning a Variable or a tuple of them.
        x_data (array or tuple of arrays): inputs; float ones are cast to ``dtype``.
        y_grad (array, tuple of arrays or None): output gradients; None means ones (for
            scalar outputs).
        params (tuple of Parameter): parameters ``func`` uses; checked too.
        eps, atol, rtol (float): step and tolerances.
        no_grads (tuple of bool): True for inputs not to differentiate (default: the
            non-float ones).
        dtype: precision of the check (float64 recommended).
        full_jacobian_limit (int): inputs of at most this many elements in total are also
            compared entry by entry.

    GPU inputs are checked with their device current (``cuda:1`` works without
    ``with device:`` around the call).
    """
    with backend.using_device_of(_as_tuple(x_data), [p.array for p in params]):
        _check_backward(func, x_data, y_grad, params, eps, atol, rtol, no_grads, dtype,
                        full_jacobian_limit)


def _check_backward(func, x_data, y_grad, params, eps, atol, rtol, no_grads, dtype,
                    full_jacobian_limit):
    arrays = [a.astype(dtype) if _is_float(a) and dtype else a for a in _as_tuple(x_data)]
    for p in params:
        if dtype:
            p.array = p.array.astype(dtype)
    if no_grads is None:
        no_grads = [not _is_float(a) for a in arrays]
    requires = [not n for n in no_grads]
    if y_grad is not None:
        y_grad = tuple(None if g is None else g.astype(dtype) if dtype else g
                       for g in _as_tuple(y_grad))
    analytic, gys = _analytic(func, arrays, requires, params, y_grad)
    wrt = [a for a, r in zip(arrays, requires) if r] + [p.array for p in params]
    names = [f'input {i}' for i, r in enumerate(requires) if r] + [
        f'parameter {p.name or i}' for i, p in enumerate(params)]

    def forward():
        return _outputs_as_arrays(func, arrays)

    _check_directional(forward, wrt, analytic, gys, names, eps, atol, rtol)
    if sum(a.size for a in wrt) <= full_jacobian_limit:
        numeric = numerical_grad(forward, wrt, gys, eps)
        for name, g_num, g_ana in zip(names, numeric, analytic):
            g_ana = numpy.zeros_like(g_num) if g_ana is None else g_ana
            _assert_close(g_ana, g_num, atol, rtol, f'gradient of {name} (element-wise)')


def _check_directional(forward, wrt, analytic, gys, names, eps, atol, rtol):
    rng = numpy.random.RandomState(0)
    directions = [rng.normal(size=a.shape) for a in wrt]
    norm = numpy.sqrt(sum(float((d ** 2).sum()) for d in directions)) or 1.0
    directions = [d / norm for d in directions]
    originals = [backend.to_numpy(a).copy() for a in wrt]
    values = []
    for sign in (1, -1):
        for a, o, d in zip(wrt, originals, directions):
            a[...] = backend.to_device(o + sign * eps * d, backend.get_device_from_array(a))
        values.append(_inner([backend.to_numpy(y) for y in forward()], gys))
    for a, o in zip(wrt, originals):
        a[...] = backend.to_device(o, backend.get_device_from_array(a))
    numeric = (values[0] - values[1]) / (2 * eps)
    exact = sum(float((g * d).sum()) for g, d in zip(analytic, directions) if g is not None)
    _assert_close(numpy.array(exact), numpy.array(numeric), atol, rtol,
                  f'directional derivative over {", ".join(names)}')


def _assert_close(actual, expected, atol, rtol, what):
    actual = numpy.asarray(actual, dtype=numpy.float64)
    expected = numpy.asarray(expected, dtype=numpy.float64)
    if actual.shape != expected.shape:
        raise AssertionError(f'{what}: shape {actual.shape} != {expected.shape}')
    if not numpy.allclose(actual, expected, atol=atol, rtol=rtol):
        error = numpy.abs(actual - expected).max()
        raise AssertionError(
            f'{what}: backward and numerical gradient differ (max abs error {error:.3g}, '
            f'atol={atol}, rtol={rtol})\nbackward:\n{actual}\nnumerical:\n{expected}'
        )


def check_double_backward(func, x_data, y_grad, x_grad_grad, params=(), eps=1e-3, atol=1e-4,
                          rtol=1e-3, no_grads=None, dtype=numpy.float64):
    """Check the gradient of ``func``'s backward (second order) against central differences.

    It checks ``backward`` of the function that maps (inputs, output gradients) to the
    input gradients, weighted by ``x_grad_grad``.

    Args:
        func: as in check_backward.
        x_data: inputs.
        y_grad: output gradients (differentiated too).
        x_grad_grad: weights of the input gradients.
        params, eps, atol, rtol, no_grads, dtype: as in check_backward.
    """
    x_data = _as_tuple(x_data)
    y_grad = _as_tuple(y_grad)
    n_x = len(x_data)
    if no_grads is None:
        no_grads = [not _is_float(a) for a in x_data]

    def first_order(*args):
        xs, gys = args[:n_x], args[n_x:]
        for x, no_grad in zip(xs, no_grads):
            x.requires_grad = not no_grad
        ys = _as_tuple(func(*xs))
        targets = [x for x, n in zip(xs, no_grads) if not n] + list(params)
        gxs = backprop.grad(ys, targets, list(gys), enable_double_backprop=True)
        return tuple(
            g if g is not None else variable_module.Variable(
                numpy.zeros_like(t.array), requires_grad=False)
            for g, t in zip(gxs, targets))

    check_backward(first_order, tuple(x_data) + y_grad, x_grad_grad, params, eps, atol, rtol,
                   no_grads=list(no_grads) + [False] * len(y_grad), dtype=dtype)
