import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = [(None, False), (0, False), (1, True), ((0, 2), False), ((-1,), True)]


@pytest.mark.parametrize('axis, keepdims', CASES, ids=[str(c) for c in CASES])
def test_mean(axis, keepdims, rng):
    x = rng.standard_normal((2, 3, 4))
    check_function(lambda x: F.mean(x, axis=axis, keepdims=keepdims), (x,),
                   lambda x: numpy.asarray(x.mean(axis=axis, keepdims=keepdims)),
                   double_backward=True)


def test_mean_keeps_float32():
    assert F.mean(numpy.ones((2, 3), numpy.float32)).dtype == numpy.float32


def test_mean_errors():
    with pytest.raises(ValueError, match='mean: axis 2 is out of range'):
        F.mean(numpy.zeros((2, 2)), axis=2)
    with pytest.raises(TypeError, match='mean: x must be a float array'):
        F.mean(numpy.zeros(2, numpy.int32))
