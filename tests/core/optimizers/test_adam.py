"""Adam, AMSGrad and AdamW: two steps against Algorithm 1 of Kingma and Ba."""

import numpy
import pytest

from cvzoo.core.links.link import Link
from cvzoo.core.optimizers import adam


def _expected(w0, grads, alpha, beta1, beta2, eps, eta, weight_decay_rate, amsgrad):
    w, m, v, vhat = w0.copy(), 0 * w0, 0 * w0, 0 * w0
    out = []
    for t, g in enumerate(grads, start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        vhat = numpy.maximum(vhat, v)
        lr = alpha * numpy.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        denominator = numpy.sqrt(vhat if amsgrad else v) + eps
        w = w - eta * (lr * m / denominator + weight_decay_rate * w)
        out.append(w)
    return out


@pytest.mark.parametrize('weight_decay_rate, amsgrad, eta', [
    (0, False, 1.0), (0.1, False, 0.5), (0, True, 1.0)], ids=['adam', 'decay-eta', 'amsgrad'])
def test_two_steps(two_steps, weight_decay_rate, amsgrad, eta):
    settings = {'alpha': 0.01, 'beta1': 0.8, 'beta2': 0.9, 'eps': 1e-6, 'eta': eta,
                    'weight_decay_rate': weight_decay_rate, 'amsgrad': amsgrad}
    optimizer = adam.Adam(**settings)
    w0, grads, weights = two_steps(optimizer)
    for got, want in zip(weights, _expected(w0, grads, **settings)):
        numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize('amsgrad', [False, True], ids=['adam', 'amsgrad'])
def test_amsgrad_when_v_shrinks(amsgrad):
    # NOTE: a large then a small gradient makes v shrink, where AMSGrad's max matters.
    settings = {'alpha': 0.01, 'beta1': 0.0, 'beta2': 0.5, 'eps': 1e-6, 'eta': 1.0, 'weight_decay_rate': 0}
    grads = [numpy.full(2, 10.0), numpy.full(2, 0.1)]
    link = Link()
    link.add_param('W', initializer=numpy.ones(2))
    optimizer = adam.Adam(amsgrad=amsgrad, **settings).setup(link)
    for g in grads:
        link.W.grad = g.copy()
        optimizer.update()
    want = _expected(numpy.ones(2), grads, amsgrad=amsgrad, **settings)[1]
    other = _expected(numpy.ones(2), grads, amsgrad=not amsgrad, **settings)[1]
    numpy.testing.assert_allclose(link.W.array, want, rtol=1e-10)
    assert not numpy.allclose(link.W.array, other)


def test_lr_is_bias_corrected_and_read_only(two_steps):
    optimizer = adam.Adam(alpha=0.01, beta1=0.8, beta2=0.9)
    with pytest.raises(RuntimeError, match='first update'):
        _ = optimizer.lr
    two_steps(optimizer)
    assert optimizer.t == 2
    assert optimizer.lr == pytest.approx(0.01 * numpy.sqrt(1 - 0.9 ** 2) / (1 - 0.8 ** 2))
    with pytest.raises(AttributeError):
        optimizer.lr = 0.1
    optimizer.alpha = 0.02
    assert optimizer.lr == pytest.approx(0.02 * numpy.sqrt(1 - 0.9 ** 2) / (1 - 0.8 ** 2))


def test_adamw_default_decay():
    assert adam.AdamW().weight_decay_rate == 0.01
    assert adam.Adam().weight_decay_rate == 0
