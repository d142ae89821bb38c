import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable
from cvzoo.testing import check_function

CASES = [(None, False), (0, False), (1, True), ((0, 2), False), ((-1,), True), ((2, 0), True)]


def _distinct(rng, shape):
    """Values at least 0.1 apart, so no tie is within the finite-difference step."""
    size = int(numpy.prod(shape))
    return (rng.permutation(size) * 0.1 - size * 0.05).reshape(shape)


@pytest.mark.parametrize('axis, keepdims', CASES, ids=[str(c) for c in CASES])
def test_max(axis, keepdims, rng):
    x = _distinct(rng, (2, 3, 4))
    check_function(lambda x: F.max(x, axis=axis, keepdims=keepdims), (x,),
                   lambda x: numpy.asarray(x.max(axis=axis, keepdims=keepdims)),
                   double_backward=True)


def test_max_of_scalar_and_non_contiguous(rng):
    check_function(F.max, (numpy.array(1.5),), lambda x: x, double_backward=True)
    x = _distinct(rng, (4, 6))[::2, ::-1]
    check_function(lambda x: F.max(x, axis=1), (x,), lambda x: x.max(axis=1))


def test_max_empty_batch():
    y = F.max(numpy.zeros((0, 3)), axis=1)
    assert y.shape == (0,)


def test_max_tie_gives_gradient_to_one_element():
    x = Variable(numpy.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]))
    F.sum(F.max(x, axis=1)).backward()
    numpy.testing.assert_array_equal(x.grad, [[0, 1, 0], [1, 0, 0]])


def test_max_errors():
    with pytest.raises(ValueError, match=r'max: cannot reduce axis 0 of size 0'):
        F.max(numpy.zeros((0, 3)))
    with pytest.raises(ValueError, match='max: axis 2 is out of range'):
        F.max(numpy.zeros((2, 2)), axis=2)
