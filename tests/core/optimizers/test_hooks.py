"""WeightDecay, GradientClipping, GradientLARS: the gradient each leaves for the update."""

import numpy
import pytest

from cvzoo.core.links.link import Link
from cvzoo.core.optimizers import hooks, sgd


def _setup(hook, lr=1.0):
    rng = numpy.random.RandomState(0)
    link = Link()
    link.add_param('W', initializer=rng.uniform(-1, 1, (2, 3)))
    link.add_param('b', initializer=rng.uniform(-1, 1, (3,)))
    link.add_param('unused', initializer=numpy.ones(2))
    link.W.grad = rng.uniform(-1, 1, (2, 3))
    link.b.grad = rng.uniform(-1, 1, (3,))
    optimizer = sgd.SGD(lr=lr).setup(link)
    optimizer.add_hook(hook)
    return link, optimizer


def test_weight_decay():
    link, optimizer = _setup(hooks.WeightDecay(0.1))
    w, g = link.W.array.copy(), link.W.grad.copy()
    optimizer.update()
    numpy.testing.assert_allclose(link.W.array, w - (g + 0.1 * w))
    assert link.unused.grad is None


@pytest.mark.parametrize('threshold', [0.5, 100.0], ids=['clipped', 'untouched'])
def test_gradient_clipping(threshold):
    link, optimizer = _setup(hooks.GradientClipping(threshold))
    grads = [link.W.grad.copy(), link.b.grad.copy()]
    norm = numpy.sqrt(sum((g ** 2).sum() for g in grads))
    scale = min(1.0, threshold / norm)
    optimizer.call_hooks('pre')
    numpy.testing.assert_allclose(link.W.grad, grads[0] * scale)
    numpy.testing.assert_allclose(link.b.grad, grads[1] * scale)
    clipped = numpy.sqrt((link.W.grad ** 2).sum() + (link.b.grad ** 2).sum())
    assert clipped <= threshold + 1e-9


@pytest.mark.parametrize('threshold', [1e-2, 10.0], ids=['scaled', 'below-threshold'])
def test_gradient_lars(threshold):
    weight_decay, eps = 0.01, 1e-9
    link, optimizer = _setup(hooks.GradientLARS(threshold, weight_decay, eps))
    w, g = link.W.array.copy(), link.W.grad.copy()
    optimizer.call_hooks('pre')
    w_norm, g_norm = numpy.linalg.norm(w), numpy.linalg.norm(g)
    rate = w_norm / (eps + g_norm + weight_decay * w_norm) if w_norm > threshold else 1.0
    numpy.testing.assert_allclose(link.W.grad, rate * (g + weight_decay * w), rtol=1e-10)
