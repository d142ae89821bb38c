import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('alpha', [1.0, 0.5], ids=['default', 'half'])
def test_elu(alpha, rng):
    x = rng.uniform(0.2, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    check_function(lambda x: F.elu(x, alpha), (x,),
                   lambda x: numpy.where(x > 0, x, alpha * (numpy.exp(x) - 1)),
                   double_backward=True)


def test_elu_large_positive_input_has_finite_gradient():
    from cvzoo.core.variable import Variable
    x = Variable(numpy.array([1000.0, -1000.0]))
    y = F.sum(F.elu(x))
    y.backward()
    numpy.testing.assert_allclose(x.grad, [1.0, 0.0])


def test_elu_bad_alpha():
    with pytest.raises(TypeError, match='alpha'):
        F.elu(numpy.zeros(2), alpha=None)
