"""RMSprop: two steps against ms = a ms + (1 - a) g^2; w -= lr g / (sqrt(ms) + eps)."""

import numpy

from cvzoo.core.optimizers import rmsprop


def test_two_steps(two_steps):
    lr, alpha, eps = 0.01, 0.9, 1e-8
    w0, (g1, g2), (w1, w2) = two_steps(rmsprop.RMSprop(lr=lr, alpha=alpha, eps=eps))
    ms1 = (1 - alpha) * g1 ** 2
    expected1 = w0 - lr * g1 / (numpy.sqrt(ms1) + eps)
    ms2 = alpha * ms1 + (1 - alpha) * g2 ** 2
    expected2 = expected1 - lr * g2 / (numpy.sqrt(ms2) + eps)
    numpy.testing.assert_allclose(w1, expected1, rtol=1e-5)
    numpy.testing.assert_allclose(w2, expected2, rtol=1e-5)
