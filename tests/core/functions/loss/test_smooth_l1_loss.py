import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('beta', [1.0, 1 / 9], ids=['beta1', 'beta1_9'])
def test_smooth_l1_loss(beta, rng):
    t = rng.normal(size=(3, 4))
    x = t + rng.choice([0.4, 1.6], (3, 4)) * beta * rng.choice([-1, 1], (3, 4))

    def expected(x, t):
        d = numpy.abs(x - t)
        return numpy.where(d < beta, 0.5 * d ** 2 / beta, d - 0.5 * beta)

    check_function(lambda x, t: F.smooth_l1_loss(x, t, beta), (x, t), expected,
                   double_backward=True)


def test_smooth_l1_loss_bad_beta():
    with pytest.raises(ValueError, match='beta'):
        F.smooth_l1_loss(numpy.zeros(2), numpy.zeros(2), beta=-1)
