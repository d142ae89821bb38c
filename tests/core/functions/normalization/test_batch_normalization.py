import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def _expected(x, gamma, beta, axes, eps=2e-5):
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return gamma.reshape(shape) * (x - mean) / numpy.sqrt(var + eps) + beta.reshape(shape)


CASES = {
    '2d': ((5, 3), (3,), None, (0,)),
    'nchw': ((3, 4, 2, 3), (4,), None, (0, 2, 3)),
    'gamma_two_axes': ((3, 4, 2, 3), (4, 2), None, (0, 3)),
    'axis_given': ((3, 4, 5), (5,), (0, 1), (0, 1)),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_batch_normalization(case, rng):
    x_shape, gamma_shape, axis, axes = CASES[case]
    x = rng.normal(size=x_shape) * 2 + 1
    gamma = rng.uniform(0.5, 1.5, gamma_shape)
    beta = rng.normal(size=gamma_shape)
    check_function(lambda x, g, b: F.batch_normalization(x, g, b, axis=axis),
                   (x, gamma, beta), lambda x, g, b: _expected(x, g, b, axes),
                   backward_tolerance=dict(atol=1e-4, rtol=1e-3))


def test_batch_normalization_non_contiguous(rng):
    x = (rng.normal(size=(4, 3, 6)) + 2)[:, :, ::2]
    gamma, beta = rng.uniform(0.5, 1.5, 3), rng.normal(size=3)
    check_function(F.batch_normalization, (x, gamma, beta),
                   lambda x, g, b: _expected(x, g, b, (0, 2)),
                   backward_tolerance=dict(atol=1e-4, rtol=1e-3))


def test_running_average_update(rng):
    x = rng.normal(size=(4, 3, 2, 2)) * 3 + 1
    gamma, beta = numpy.ones(3), numpy.zeros(3)
    running_mean = rng.normal(size=3)
    running_var = rng.uniform(0.5, 2.0, 3)
    want_mean = running_mean.copy()
    want_var = running_var.copy()
    m = 4 * 2 * 2
    for c in range(3):
        values = x[:, c].ravel()
        want_mean[c] = 0.7 * want_mean[c] + 0.3 * values.mean()
        want_var[c] = 0.7 * want_var[c] + 0.3 * values.var() * m / (m - 1)
    F.batch_normalization(x, gamma, beta, running_mean=running_mean,
                          running_var=running_var, decay=0.7)
    numpy.testing.assert_allclose(running_mean, want_mean, rtol=1e-12)
    numpy.testing.assert_allclose(running_var, want_var, rtol=1e-12)


def test_batch_normalization_keeps_float32(rng):
    x = Variable(rng.normal(size=(4, 3, 2, 2)).astype(numpy.float32))
    gamma = Variable(numpy.ones(3, numpy.float32))
    beta = Variable(numpy.zeros(3, numpy.float32))
    y = F.batch_normalization(x, gamma, beta)
    y.grad = numpy.ones_like(y.array)
    y.backward()
    assert y.dtype == x.grad.dtype == gamma.grad.dtype == beta.grad.dtype == numpy.float32


def test_double_backprop_raises_clearly(rng):
    from cvzoo.core import backprop

    x = Variable(rng.normal(size=(4, 3)))
    gamma, beta = Variable(numpy.ones(3)), Variable(numpy.zeros(3))
    y = F.sum(F.batch_normalization(x, gamma, beta) ** 3)
    gx, = backprop.grad([y], [x], enable_double_backprop=True)
    with pytest.raises(NotImplementedError, match='double backprop'):
        F.sum(gx).backward()


@pytest.mark.parametrize('kwargs, match', [
    (dict(gamma=numpy.ones(4)), 'gamma'),
    (dict(beta=numpy.ones(4)), 'beta'),
    (dict(eps=0), 'eps'),
    (dict(decay=1.5), 'decay'),
    (dict(running_mean=numpy.zeros(2)), 'running_mean'),
    (dict(axis=5), 'axis'),
], ids=['gamma', 'beta', 'eps', 'decay', 'running_mean', 'axis'])
def test_bad_arguments(kwargs, match):
    args = dict(x=numpy.zeros((2, 3, 4)), gamma=numpy.ones(3), beta=numpy.zeros(3))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        F.batch_normalization(**args)


def test_running_average_update_on_each_device(device, rng):
    """The GPU path (one reduction and one elementwise kernel per pass) updates the
    running statistics as the NumPy path does."""
    from cvzoo.core import backend

    x = rng.normal(size=(4, 3, 2, 2)).astype(numpy.float32) * 3 + 1
    gamma, beta = numpy.full(3, 1.5, numpy.float32), numpy.full(3, 0.25, numpy.float32)
    host_stats = [rng.normal(size=3).astype(numpy.float32),
                  rng.uniform(0.5, 2.0, 3).astype(numpy.float32)]
    want_stats = [a.copy() for a in host_stats]
    want = F.batch_normalization(x, gamma, beta, running_mean=want_stats[0],
                                 running_var=want_stats[1], decay=0.7).array
    on_device = [backend.to_device(a, device) for a in (x, gamma, beta, *host_stats)]
    y = F.batch_normalization(*on_device[:3], running_mean=on_device[3],
                              running_var=on_device[4], decay=0.7)
    numpy.testing.assert_allclose(backend.to_numpy(y.array), want, rtol=1e-5, atol=1e-5)
    for got, expected in zip(on_device[3:], want_stats):
        numpy.testing.assert_allclose(backend.to_numpy(got), expected, rtol=1e-5)
