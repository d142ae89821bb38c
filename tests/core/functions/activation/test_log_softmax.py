import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize('shape, axis', [
    ((3, 4), 1), ((3, 4), 0), ((2, 3, 2, 2), 1), ((0, 3), 1),
], ids=['2d', 'axis0', '4d', 'empty'])
def test_log_softmax(shape, axis, rng):
    x = rng.normal(size=shape)
    check_function(lambda x: F.log_softmax(x, axis), (x,), lambda x: _log_softmax(x, axis),
                   double_backward=True)


def test_log_softmax_large_logits_are_finite():
    x = numpy.array([[1e3, 0.0, -1e3]], dtype=numpy.float32)
    y = F.log_softmax(x).array
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose(y, [[0, -1e3, -2e3]], rtol=1e-6)


def test_log_softmax_bad_axis():
    with pytest.raises(ValueError, match='axis'):
        F.log_softmax(numpy.zeros((2, 3)), axis=-3)
