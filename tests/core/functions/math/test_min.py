import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable
from cvzoo.testing import check_function

CASES = [(None, False), (0, False), (1, True), ((0, 2), False)]


@pytest.mark.parametrize('axis, keepdims', CASES, ids=[str(c) for c in CASES])
def test_min(axis, keepdims, rng):
    x = (rng.permutation(24) * 0.1).reshape(2, 3, 4)
    check_function(lambda x: F.min(x, axis=axis, keepdims=keepdims), (x,),
                   lambda x: numpy.asarray(x.min(axis=axis, keepdims=keepdims)),
                   double_backward=True)


def test_min_tie_gives_gradient_to_one_element():
    x = Variable(numpy.array([[1.0, 0.0, 0.0]]))
    F.sum(F.min(x, axis=1)).backward()
    numpy.testing.assert_array_equal(x.grad, [[0, 1, 0]])


def test_min_errors():
    with pytest.raises(ValueError, match='min: cannot reduce axis 1 of size 0'):
        F.min(numpy.zeros((2, 0)), axis=1)
