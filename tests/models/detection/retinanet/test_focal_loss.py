"""The focal loss against a hand computation, its special cases and its gradient."""

import numpy
import pytest

from cvzoo.core import gradient_check
from cvzoo.models.detection.retinanet import focal_loss


def _expected(x, t, alpha, gamma):
    p = 1 / (1 + numpy.exp(-x))
    p_t = numpy.where(t == 1, p, 1 - p)
    alpha_t = numpy.where(t == 1, alpha, 1 - alpha)
    return numpy.where(t == -1, 0, -alpha_t * (1 - p_t) ** gamma * numpy.log(p_t))


def test_two_elements_by_hand():
    # x = 0, t = 1: p = 0.5, -0.25 * 0.5^2 * log(0.5); x = 2, t = 0: p = 0.8808,
    # -0.75 * 0.8808^2 * log(0.1192)
    x = numpy.array([0.0, 2.0], numpy.float64)
    loss = focal_loss.sigmoid_focal_loss(x, numpy.array([1, 0], numpy.int32), reduce='no')
    p = 1 / (1 + numpy.exp(-2.0))
    numpy.testing.assert_allclose(
        loss.array, [0.25 * 0.25 * numpy.log(2), -0.75 * p ** 2 * numpy.log(1 - p)], rtol=1e-12)


CASES = {'default': (0.25, 2.0), 'gamma_0': (0.25, 0.0), 'gamma_1_5': (0.5, 1.5),
         'alpha_1': (1.0, 2.0)}


@pytest.mark.parametrize('alpha, gamma', list(CASES.values()), ids=list(CASES))
@pytest.mark.parametrize('dtype', [numpy.float32, numpy.float64], ids=['float32', 'float64'])
def test_matches_the_formula(rng, alpha, gamma, dtype):
    x = rng.uniform(-6, 6, (7, 5)).astype(dtype)
    t = rng.integers(-1, 2, (7, 5)).astype(numpy.int32)
    loss = focal_loss.sigmoid_focal_loss(x, t, alpha, gamma, reduce='no')
    assert loss.dtype == dtype and loss.shape == x.shape
    tol = 1e-5 if dtype == numpy.float32 else 1e-12
    numpy.testing.assert_allclose(loss.array, _expected(x.astype(numpy.float64), t, alpha, gamma),
                                  rtol=tol, atol=tol)
    total = focal_loss.sigmoid_focal_loss(x, t, alpha, gamma)
    assert total.shape == ()
    numpy.testing.assert_allclose(total.array, loss.array.sum(), rtol=tol)


def test_gamma_0_alpha_half_is_half_the_cross_entropy(rng):
    x = rng.standard_normal(20)
    t = rng.integers(0, 2, 20).astype(numpy.int32)
    ce = numpy.logaddexp(0, x) - x * t
    numpy.testing.assert_allclose(
        focal_loss.sigmoid_focal_loss(x, t, 0.5, 0.0, reduce='no').array, ce / 2, rtol=1e-12)


def test_large_logits_stay_finite():
    x = numpy.array([-100.0, 100.0, 100.0], numpy.float32)
    loss = focal_loss.sigmoid_focal_loss(x, numpy.array([1, 0, 1], numpy.int32), reduce='no')
    assert numpy.isfinite(loss.array).all()
    numpy.testing.assert_allclose(loss.array, [25.0, 75.0, 0.0], atol=1e-6)


@pytest.mark.parametrize('gamma', [2.0, 0.0], ids=['gamma_2', 'gamma_0'])
def test_gradient(rng, gamma):
    x = rng.uniform(-3, 3, (4, 3))
    t = rng.integers(-1, 2, (4, 3)).astype(numpy.int32)
    gradient_check.check_backward(
        lambda x: focal_loss.sigmoid_focal_loss(x, t, 0.25, gamma, reduce='no'), x,
        rng.standard_normal((4, 3)), eps=1e-4, atol=1e-6, rtol=1e-5)


BAD = {'reduce': ({'reduce': 'mean'}, ValueError, 'reduce'),
       'alpha': ({'alpha': 1.5}, ValueError, 'alpha'),
       'gamma': ({'gamma': -1.0}, ValueError, 'gamma'),
       'float_t': ({'t': numpy.zeros(3, numpy.float32)}, TypeError, 't:'),
       'shape': ({'t': numpy.zeros(4, numpy.int32)}, ValueError, 't:')}


@pytest.mark.parametrize('change, error, message', list(BAD.values()), ids=list(BAD))
def test_arguments_are_checked(change, error, message):
    kwargs = {'t': numpy.zeros(3, numpy.int32), **change}
    with pytest.raises(error, match=message):
        focal_loss.sigmoid_focal_loss(numpy.zeros(3, numpy.float32), **kwargs)
