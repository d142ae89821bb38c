import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = [(None, False), (0, False), (1, True), ((0, 2), False), ((-1,), True), ((0, 1, 2), True)]


@pytest.mark.parametrize('axis, keepdims', CASES, ids=[str(c) for c in CASES])
def test_sum(axis, keepdims, rng):
    x = rng.standard_normal((2, 3, 4))
    check_function(lambda x: F.sum(x, axis=axis, keepdims=keepdims), (x,),
                   lambda x: numpy.asarray(x.sum(axis=axis, keepdims=keepdims)),
                   double_backward=True)


def test_sum_bad_axis_names_it():
    with pytest.raises(ValueError, match='axis 3 is out of range'):
        F.sum(numpy.zeros((2, 2), numpy.float32), axis=3)
    with pytest.raises(ValueError, match='repeated axis'):
        F.sum(numpy.zeros((2, 2), numpy.float32), axis=(0, -2))


def test_sum_takes_numpy_int_axis():
    x = numpy.arange(6.0).reshape(2, 3)
    numpy.testing.assert_array_equal(F.sum(x, axis=numpy.int64(1)).array, [3.0, 12.0])
