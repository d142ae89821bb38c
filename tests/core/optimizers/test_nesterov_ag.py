"""NesterovAG: two steps against the velocity form."""

import numpy

from cvzoo.core.optimizers import nesterov_ag


def test_two_steps(two_steps):
    lr, mu = 0.1, 0.9
    w0, (g1, g2), (w1, w2) = two_steps(nesterov_ag.NesterovAG(lr=lr, momentum=mu))
    v1 = -lr * g1
    expected1 = w0 + mu * mu * v1 - (1 + mu) * lr * g1
    v2 = mu * v1 - lr * g2
    expected2 = expected1 + mu * mu * v2 - (1 + mu) * lr * g2
    numpy.testing.assert_allclose(w1, expected1, rtol=1e-5)
    numpy.testing.assert_allclose(w2, expected2, rtol=1e-5)
