import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _expected(x, gamma, beta, mean, var, eps=2e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    x_hat = (x - mean.reshape(shape)) / numpy.sqrt(var.reshape(shape) + eps)
    return gamma.reshape(shape) * x_hat + beta.reshape(shape)


@pytest.mark.parametrize('shape', [(5, 3), (2, 3, 4, 2)], ids=['2d', 'nchw'])
def test_fixed_batch_normalization(shape, rng):
    x = rng.normal(size=shape)
    gamma = rng.uniform(0.5, 1.5, 3)
    beta = rng.normal(size=3)
    mean = rng.normal(size=3)
    var = rng.uniform(0.5, 1.5, 3)
    check_function(F.fixed_batch_normalization, (x, gamma, beta, mean, var), _expected,
                   double_backward=True)


def test_fixed_batch_normalization_bad_var_shape():
    with pytest.raises(ValueError, match='var'):
        F.fixed_batch_normalization(numpy.zeros((2, 3)), numpy.ones(3), numpy.zeros(3),
                                    numpy.zeros(3), numpy.ones(2))
