import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _huber(x, t, delta):
    d = numpy.abs(x - t)
    return numpy.where(d <= delta, 0.5 * d ** 2, delta * (d - 0.5 * delta))


def _inputs(rng, shape, delta):
    # |x - t| kept away from delta, on both sides
    t = rng.normal(size=shape)
    d = rng.choice([0.3, 1.7], shape) * delta * rng.choice([-1, 1], shape)
    return t + d, t


@pytest.mark.parametrize('delta', [1.0, 0.5], ids=['delta1', 'delta05'])
@pytest.mark.parametrize('reduce', ['sum_along_second_axis', 'no'])
def test_huber_loss(delta, reduce, rng):
    x, t = _inputs(rng, (3, 4, 2), delta)

    def expected(x, t):
        loss = _huber(x, t, delta)
        return loss.sum(axis=1) if reduce != 'no' else loss

    check_function(lambda x, t: F.huber_loss(x, t, delta, reduce=reduce), (x, t), expected,
                   double_backward=True)


def test_huber_loss_bad_arguments():
    with pytest.raises(ValueError, match='delta'):
        F.huber_loss(numpy.zeros((2, 2)), numpy.zeros((2, 2)), 0)
    with pytest.raises(ValueError, match='reduce'):
        F.huber_loss(numpy.zeros((2, 2)), numpy.zeros((2, 2)), 1.0, reduce='mean')
    with pytest.raises(ValueError, match='shape'):
        F.huber_loss(numpy.zeros((2, 2)), numpy.zeros((2, 3)), 1.0)
