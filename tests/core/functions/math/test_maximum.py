import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable
from cvzoo.testing import check_function

SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))]


@pytest.mark.parametrize('shapes', SHAPES, ids=['same', 'row', 'both', 'scalar'])
def test_maximum(shapes, rng):
    # a is in [-2, -1] or [1, 2] and b in (-0.5, 0.5): never a tie.
    a = numpy.asarray(rng.uniform(1, 2, shapes[0]) * rng.choice([-1, 1], shapes[0]))
    b = numpy.asarray(rng.uniform(-0.5, 0.5, shapes[1]))
    check_function(F.maximum, (a, b), numpy.maximum, double_backward=True)
    check_function(F.maximum, (b, a), numpy.maximum, double_backward=True)


def test_maximum_tie_goes_to_a():
    a, b = Variable(numpy.array([1.0, 2.0])), Variable(numpy.array([1.0, 3.0]))
    F.sum(F.maximum(a, b)).backward()
    numpy.testing.assert_array_equal(a.grad, [1.0, 0.0])
    numpy.testing.assert_array_equal(b.grad, [0.0, 1.0])


def test_maximum_errors():
    with pytest.raises(ValueError, match=r'shapes of a \(2,\) and b \(3,\) do not broadcast'):
        F.maximum(numpy.zeros(2), numpy.zeros(3))
    with pytest.raises(TypeError, match='float32 and float64'):
        F.maximum(numpy.zeros(2, numpy.float32), numpy.zeros(2))
