"""SGD: two steps against param -= lr * grad."""

import numpy

from cvzoo.core.optimizers import sgd


def test_two_steps(two_steps):
    w0, (g1, g2), (w1, w2) = two_steps(sgd.SGD(lr=0.1))
    numpy.testing.assert_allclose(w1, w0 - 0.1 * g1, rtol=1e-6)
    numpy.testing.assert_allclose(w2, w0 - 0.1 * g1 - 0.1 * g2, rtol=1e-6)


def test_lr_assignment_changes_next_step(two_steps):
    optimizer = sgd.SGD(lr=0.1)
    assert optimizer.lr == 0.1
    optimizer.lr = 0.5
    w0, (g1, _), (w1, _) = two_steps(optimizer)
    numpy.testing.assert_allclose(w1, w0 - 0.5 * g1, rtol=1e-6)
