"""The harness every differentiable function's test uses.

A test supplies the inputs, the function and a plain-NumPy ``expected``; ``check_function``
then checks forward in float32 and float64, backward against finite differences in
float64, double backward when asked, and that the function node keeps no array it did
not declare with retain_inputs/retain_outputs.

>>> import numpy as np
>>> import cvzoo.core.functions as F
>>> x = np.random.randn(2, 3)
>>> check_function(F.exp, (x,), lambda x: np.exp(x), double_backward=True)
"""

import numpy

from cvzoo.core import backend, gradient_check, using_config
from cvzoo.core import variable as variable_module

FORWARD_TOLERANCE = {
    numpy.dtype(numpy.float16): dict(atol=1e-2, rtol=1e-2),
    numpy.dtype(numpy.float32): dict(atol=1e-4, rtol=1e-4),
    numpy.dtype(numpy.float64): dict(atol=1e-10, rtol=1e-8),
}


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _cast(arrays, dtype):
    return tuple(a.astype(dtype) if a.dtype.kind == 'f' else a for a in arrays)


def check_forward(func, inputs, expected, dtype=numpy.float32, atol=None, rtol=None,
                  device='cpu'):
    """Compare ``func`` on ``inputs`` cast to ``dtype`` with ``expected`` (plain NumPy).

    Args:
        func: callable on Variables returning a Variable or a tuple of them.
        inputs (tuple of arrays): float ones are cast to ``dtype``.
        expected: callable on the cast arrays returning the expected array(s).
        dtype: precision to check.
        atol, rtol: override the default tolerance of ``dtype``.
        device (str): where ``func`` runs; ``expected`` runs on the host.

    cuDNN convolutions run without TF32 here (config ``allow_tf32``): float32 is checked
    as float32.
    """
    arrays = _cast(_as_tuple(inputs), dtype)
    want = _as_tuple(expected(*arrays))
    with using_config('allow_tf32', False):  # float32 means float32, also on cuDNN
        got = _as_tuple(func(*[variable_module.Variable(a, requires_grad=False)
                               for a in _send(arrays, device)]))
    if len(got) != len(want):
        raise AssertionError(f'forward returned {len(got)} outputs, expected {len(want)}')
    tolerance = dict(FORWARD_TOLERANCE[numpy.dtype(dtype)])
    tolerance.update({k: v for k, v in (('atol', atol), ('rtol', rtol)) if v is not None})
    for i, (g, w) in enumerate(zip(got, want)):
        g = backend.to_numpy(variable_module.as_array(g))
        w = numpy.asarray(w)
        if g.shape != w.shape:
            raise AssertionError(f'output {i}: shape {g.shape}, expected {w.shape}')
        if w.dtype.kind == 'f' and g.dtype != numpy.dtype(dtype):
            raise AssertionError(f'output {i}: dtype {g.dtype}, expected {numpy.dtype(dtype)}')
        if not numpy.allclose(g, w, equal_nan=True, **tolerance):
            raise AssertionError(
                f'output {i} ({numpy.dtype(dtype)}): max abs error '
                f'{numpy.abs(g.astype(numpy.float64) - w).max():.3g}\ngot:\n{g}\nexpected:\n{w}')


def check_retention(func, inputs, device='cpu'):
    """Fail when the creator of ``func``'s output holds input/output arrays undeclared.

    Arrays a function keeps as attributes (besides what retain_inputs/retain_outputs
    declared) defeat the memory contract. Arrays it computed itself (pooling indexes,
    a dropout mask) are allowed.
    """
    arrays = [a.astype(numpy.float64) if a.dtype.kind == 'f' else a for a in _as_tuple(inputs)]
    arrays = _send(arrays, device)
    xs = [variable_module.Variable(a, requires_grad=a.dtype.kind == 'f') for a in arrays]
    ys = _as_tuple(func(*xs))
    creator = ys[0].creator
    if creator is None:
        return
    watched = [x.array for x in xs] + [y.array for y in ys]
    for name, value in vars(creator).items():
        if name.startswith('_retained'):
            continue
        for candidate in _arrays_in(value):
            if any(candidate.size and _overlap(candidate, w) for w in watched):
                raise AssertionError(
                    f'{creator.label}.{name} keeps an input or output array without '
                    'declaring it with retain_inputs/retain_outputs')


def _overlap(a, b):
    """Whether two arrays share memory: exactly for NumPy arrays, by address bounds for
    device arrays (CuPy's exact test is wrong for 0-d arrays on a real GPU: it compares
    the addresses of the kernel's local copies)."""
    if isinstance(a, numpy.ndarray) and isinstance(b, numpy.ndarray):
        return bool(numpy.shares_memory(a, b))
    if backend.get_array_module(a) is not backend.get_array_module(b):
        return False
    return bool(backend.get_array_module(a).may_share_memory(a, b))


def _is_array(value):
    return isinstance(value, numpy.ndarray) or (
        hasattr(value, 'shape') and hasattr(value, 'dtype')
        and backend.get_array_module(value) is not numpy)


def _arrays_in(value):
    if _is_array(value):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if _is_array(v)]
    return []


def devices_to_check():
    """The devices every function check runs on: the CPU, and cuda:0 when a GPU (or the
    CuPy stand-in of ``pytest --fake-cuda``) is there."""
    return ['cpu'] + (['cuda:0'] if backend.is_cuda_available() else [])


def _send(arrays, device):
    return tuple(None if a is None else backend.to_device(a, device) for a in arrays)


def check_function(func, inputs, expected, *, grad_outputs=None, double_backward=False,
                   dtypes=(numpy.float32, numpy.float64), forward_tolerance=None,
                   backward_tolerance=None, eps=1e-3, no_grads=None, params=(),
                   devices=None):
    """Run every check on one function and one set of inputs.

    Args:
        func: callable on Variables returning a Variable or a tuple of them.
        inputs (tuple of arrays): one case; move them off non-differentiable points first.
        expected: plain-NumPy callable giving the expected output(s).
        grad_outputs: output gradients for the backward check (default: random normal).
        double_backward (bool): also check the second-order gradient.
        dtypes: forward precisions to check.
        forward_tolerance (dict): ``atol``/``rtol`` for the forward check.
        backward_tolerance (dict): ``atol``/``rtol`` for the gradient checks.
        eps (float): finite-difference step.
        no_grads (tuple of bool): inputs not to differentiate.
        params (tuple of Parameter): parameters the function uses.
        devices (list of str): where to run every check (default:
            :func:`devices_to_check`); inputs, output gradients and ``params`` are sent
            there, and ``expected`` always runs on the host.
    """
    inputs = _as_tuple(inputs)
    for device in devices or devices_to_check():
        for param in params:
            param.to_device(device)
        try:
            with backend.get_device(device):
                _check_on_device(func, inputs, expected, grad_outputs, double_backward, dtypes,
                                 forward_tolerance, backward_tolerance, eps, no_grads, params,
                                 device)
        except AssertionError as exc:
            raise AssertionError(f'on {device}: {exc}') from exc
        finally:
            for param in params:
                param.to_device('cpu')


def _check_on_device(func, inputs, expected, grad_outputs, double_backward, dtypes,
                     forward_tolerance, backward_tolerance, eps, no_grads, params, device):
    for dtype in dtypes:
        check_forward(func, inputs, expected, dtype, device=device, **(forward_tolerance or {}))
    check_retention(func, inputs, device=device)
    inputs64 = _cast(inputs, numpy.float64)
    rng = numpy.random.RandomState(1)
    if grad_outputs is None:
        outputs = _as_tuple(expected(*inputs64))
        grad_outputs = tuple(rng.normal(size=numpy.shape(y)) for y in outputs)
    grad_outputs = _send(_as_tuple(grad_outputs), device)
    inputs64 = _send(inputs64, device)
    tolerance = backward_tolerance or {}
    gradient_check.check_backward(func, inputs64, grad_outputs, params=params, eps=eps,
                                  no_grads=no_grads, **tolerance)
    if double_backward:
        differentiated = [i for i, a in enumerate(inputs64)
                          if a.dtype.kind == 'f' and not (no_grads and no_grads[i])]
        x_grad_grad = tuple(rng.normal(size=inputs64[i].shape) for i in differentiated)
        x_grad_grad += tuple(rng.normal(size=p.shape) for p in params)
        x_grad_grad = _send(x_grad_grad, device)
        gradient_check.check_double_backward(
            func, inputs64, grad_outputs, x_grad_grad, params=params, eps=eps,
            no_grads=no_grads, **{k: v * 10 for k, v in tolerance.items()})
