import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape, axis', [((2, 3, 2, 2), 1), ((3, 4), 1), ((3, 4), 0)],
                         ids=['nchw', '2d', 'axis0'])
def test_normalize(shape, axis, rng):
    x = rng.normal(size=shape)

    def expected(x):
        return x / (numpy.sqrt((x * x).sum(axis=axis, keepdims=True)) + 1e-5)

    check_function(lambda x: F.normalize(x, axis=axis), (x,), expected, double_backward=True)


def test_normalize_gives_unit_vectors(rng):
    y = F.normalize(rng.normal(size=(2, 5, 3)).astype(numpy.float32)).array
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose((y * y).sum(axis=1), 1, rtol=1e-4)


def test_normalize_bad_axis():
    with pytest.raises(ValueError, match='axis'):
        F.normalize(numpy.zeros((2, 3)), axis=2)
