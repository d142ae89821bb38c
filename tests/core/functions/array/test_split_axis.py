import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable
from cvzoo.testing import check_function

CASES = {
    'sections': (3, 1),
    'indices': ([1, 4], 1),
    'axis0': ([1], 0),
    'negative_axis': (2, -1),
    'negative_index': ([-2], 1),
    'empty_pieces': ([0, 3, 3], 1),
    'one_piece': (1, 1),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_split_axis(case, rng):
    indices, axis = CASES[case]
    x = rng.standard_normal((2, 6, 4))
    check_function(lambda x: F.split_axis(x, indices, axis), (x,),
                   lambda x: tuple(numpy.split(x, indices, axis)), double_backward=True)


def test_unused_outputs_get_zero_gradient(rng):
    x = rng.standard_normal((2, 6))
    check_function(lambda x: F.split_axis(x, 3, 1)[1], (x,), lambda x: x[:, 2:4],
                   double_backward=True)
    v = Variable(x)
    y = F.split_axis(v, [2, 5], 1)
    F.sum(y[2]).backward()
    numpy.testing.assert_array_equal(v.grad, [[0, 0, 0, 0, 0, 1]] * 2)


def test_force_tuple():
    x = numpy.zeros((2, 3))
    assert isinstance(F.split_axis(x, 1, 0), tuple)
    assert isinstance(F.split_axis(x, 1, 0, force_tuple=False), Variable)


def test_split_axis_errors():
    x = numpy.zeros((2, 5))
    with pytest.raises(ValueError, match='3 sections do not divide the axis of size 5'):
        F.split_axis(x, 3, 1)
    with pytest.raises(ValueError, match=r'non-decreasing positions in \[0, 5\].*\[3, 1\]'):
        F.split_axis(x, [3, 1], 1)
    with pytest.raises(ValueError, match='axis 2 is out of range'):
        F.split_axis(x, 1, 2)
    with pytest.raises(TypeError, match='indices_or_sections must be an int or a sequence'):
        F.split_axis(x, 1.5, 1)
