import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _softmax(x, axis):
    e = numpy.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize('shape, axis', [
    ((3, 4), 1), ((3, 4), 0), ((2, 3, 2, 2), 1), ((2, 3, 4), -1), ((0, 3), 1),
], ids=['2d', 'axis0', '4d', 'last', 'empty'])
def test_softmax(shape, axis, rng):
    x = rng.normal(size=shape)
    check_function(lambda x: F.softmax(x, axis), (x,), lambda x: _softmax(x, axis),
                   double_backward=True)


def test_softmax_large_logits_are_finite():
    x = numpy.array([[1e3, 0.0, -1e3], [1e3, 1e3, 1e3]], dtype=numpy.float32)
    y = F.softmax(x).array
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose(y, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)


def test_softmax_bad_axis():
    with pytest.raises(ValueError, match='axis'):
        F.softmax(numpy.zeros((2, 3)), axis=2)
    with pytest.raises(TypeError, match='axis'):
        F.softmax(numpy.zeros((2, 3)), axis=1.0)
