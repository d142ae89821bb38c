import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _expected(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / numpy.sqrt(var + eps) + beta


@pytest.mark.parametrize('shape', [(3, 5), (2, 3, 4)], ids=['2d', '3d'])
def test_layer_normalization(shape, rng):
    x = rng.normal(size=shape) * 2 + 1
    gamma = rng.uniform(0.5, 1.5, shape[-1])
    beta = rng.normal(size=shape[-1])
    check_function(F.layer_normalization, (x, gamma, beta), _expected, double_backward=True,
                   backward_tolerance=dict(atol=1e-4, rtol=1e-3))


def test_layer_normalization_bad_gamma():
    with pytest.raises(ValueError, match='gamma'):
        F.layer_normalization(numpy.zeros((2, 3)), numpy.ones(2), numpy.zeros(2))
