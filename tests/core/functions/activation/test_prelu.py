import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _expected(x, W):
    W_b = W.reshape((1,) + W.shape + (1,) * (x.ndim - 1 - W.ndim))
    return numpy.where(x > 0, x, x * W_b)


@pytest.mark.parametrize('x_shape, W_shape', [
    ((2, 3), (3,)),
    ((2, 3, 4, 4), (3,)),
    ((2, 3, 4, 2), (3, 4)),
], ids=['2d', 'per_channel', 'two_axes'])
def test_prelu(x_shape, W_shape, rng):
    x = rng.uniform(0.2, 2.0, x_shape) * rng.choice([-1, 1], x_shape)
    W = rng.uniform(-0.5, 0.5, W_shape)
    check_function(F.prelu, (x, W), _expected, double_backward=True)


def test_prelu_bad_W_shape():
    with pytest.raises(ValueError, match='W'):
        F.prelu(numpy.zeros((2, 3, 4)), numpy.zeros(4))


def test_prelu_bad_dtype():
    with pytest.raises(TypeError, match='dtype'):
        F.prelu(numpy.zeros((2, 3)), numpy.zeros(3, dtype=numpy.float32))
