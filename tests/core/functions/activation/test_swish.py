import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _swish(x, beta):
    beta = numpy.asarray(beta)
    if beta.ndim:
        beta = beta.reshape((1,) + beta.shape + (1,) * (x.ndim - 1 - beta.ndim))
    return x / (1 + numpy.exp(-beta * x))


def test_swish_float_beta(rng):
    x = rng.normal(size=(3, 4))
    check_function(lambda x: F.swish(x, 1.5), (x,), lambda x: _swish(x, 1.5),
                   double_backward=True)


@pytest.mark.parametrize('x_shape, beta_shape', [
    ((2, 3), (3,)), ((2, 3, 2, 2), (3,)), ((2, 3, 2), ()),
], ids=['2d', 'per_channel', 'scalar_array'])
def test_swish_parameter_beta(x_shape, beta_shape, rng):
    x = rng.normal(size=x_shape)
    beta = rng.uniform(0.5, 2.0, beta_shape)
    check_function(F.swish, (x, beta), _swish, double_backward=True)


def test_swish_bad_beta():
    with pytest.raises(ValueError, match='beta'):
        F.swish(numpy.zeros((2, 3)), numpy.ones(4))
    with pytest.raises(TypeError, match='beta'):
        F.swish(numpy.zeros((2, 3)), 'one')
