"""MomentumSGD: two steps against v = mu v - lr g; w += v."""

import numpy

from cvzoo.core.optimizers import momentum_sgd


def test_two_steps(two_steps):
    lr, mu = 0.1, 0.9
    w0, (g1, g2), (w1, w2) = two_steps(momentum_sgd.MomentumSGD(lr=lr, momentum=mu))
    v1 = -lr * g1
    v2 = mu * v1 - lr * g2
    numpy.testing.assert_allclose(w1, w0 + v1, rtol=1e-6)
    numpy.testing.assert_allclose(w2, w0 + v1 + v2, rtol=1e-5)


def test_defaults():
    optimizer = momentum_sgd.MomentumSGD()
    assert (optimizer.lr, optimizer.momentum) == (0.01, 0.9)
