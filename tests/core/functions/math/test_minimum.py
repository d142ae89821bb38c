import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable
from cvzoo.testing import check_function

SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3), ())]


@pytest.mark.parametrize('shapes', SHAPES, ids=['same', 'row', 'scalar'])
def test_minimum(shapes, rng):
    # a is in [-2, -1] or [1, 2] and b in (-0.5, 0.5): never a tie.
    a = numpy.asarray(rng.uniform(1, 2, shapes[0]) * rng.choice([-1, 1], shapes[0]))
    b = numpy.asarray(rng.uniform(-0.5, 0.5, shapes[1]))
    check_function(F.minimum, (a, b), numpy.minimum, double_backward=True)


def test_minimum_tie_goes_to_a():
    a, b = Variable(numpy.array([1.0, 2.0])), Variable(numpy.array([1.0, 0.0]))
    F.sum(F.minimum(a, b)).backward()
    numpy.testing.assert_array_equal(a.grad, [1.0, 0.0])
    numpy.testing.assert_array_equal(b.grad, [0.0, 1.0])


def test_minimum_errors():
    with pytest.raises(ValueError, match='minimum: shapes of a'):
        F.minimum(numpy.zeros(2), numpy.zeros(3))
