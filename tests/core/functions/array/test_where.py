import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable
from cvzoo.testing import check_function

SHAPES = {
    'same': ((3, 4), (3, 4), (3, 4)),
    'broadcast_condition': ((4,), (3, 4), (3, 4)),
    'broadcast_x': ((3, 4), (1, 4), (3, 1)),
    'broadcast_all': ((3, 1), (4,), ()),
}


@pytest.mark.parametrize('case', sorted(SHAPES))
def test_where(case, rng):
    shape_c, shape_x, shape_y = SHAPES[case]
    condition = rng.standard_normal(shape_c) > 0
    x = numpy.asarray(rng.standard_normal(shape_x))
    y = numpy.asarray(rng.standard_normal(shape_y))
    check_function(F.where, (condition, x, y), numpy.where, double_backward=True)


def test_where_with_a_number(rng):
    condition = rng.standard_normal((2, 3)) > 0
    x = rng.standard_normal((2, 3))
    check_function(lambda c, x: F.where(c, x, 0.0), (condition, x),
                   lambda c, x: numpy.where(c, x, 0.0), double_backward=True)
    assert F.where(condition, x.astype(numpy.float32), 1).dtype == numpy.float32


def test_where_condition_as_variable():
    condition = Variable(numpy.array([True, False]), requires_grad=False)
    x = Variable(numpy.array([1.0, 2.0]))
    F.sum(F.where(condition, x, 0.0)).backward()
    numpy.testing.assert_array_equal(x.grad, [1.0, 0.0])


def test_where_errors():
    x = numpy.zeros(3)
    with pytest.raises(TypeError, match='condition must be a bool array'):
        F.where(numpy.zeros(3), x, x)
    with pytest.raises(TypeError, match='x and y must share a dtype'):
        F.where(x > 0, x, x.astype(numpy.float32))
    with pytest.raises(ValueError, match=r'condition \(3,\), x \(3,\) and y \(2,\)'):
        F.where(x > 0, x, numpy.zeros(2))
    with pytest.raises(TypeError, match='cannot both be numbers'):
        F.where(x > 0, 1.0, 0.0)
