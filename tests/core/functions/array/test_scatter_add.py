import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _expected(slices):
    def expected(a, b):
        y = a.copy()
        numpy.add.at(y, slices, b)
        return y
    return expected


CASES = {
    'repeated_rows': (numpy.array([0, 2, 2, 0, 2]), (5, 4)),
    'slice': ((slice(1, 3), slice(None, None, 2)), (2, 2)),
    'broadcast_b': ((slice(None), numpy.array([1, 1])), (1, 2)),
    'bool_mask': (numpy.array([True, False, True]), (2, 4)),
    'int': ((1, 3), ()),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_scatter_add(case, rng):
    slices, b_shape = CASES[case]
    a = rng.standard_normal((3, 4))
    b = numpy.asarray(rng.standard_normal(b_shape))
    check_function(lambda a, b: F.scatter_add(a, slices, b), (a, b), _expected(slices),
                   double_backward=True)


def test_scatter_add_errors():
    a = numpy.zeros((3, 4))
    with pytest.raises(ValueError, match=r'b of shape \(3,\) does not broadcast to a\[slices\] '
                                         r'of shape \(2, 4\)'):
        F.scatter_add(a, numpy.array([0, 1]), numpy.zeros(3))
    with pytest.raises(TypeError, match='float64 and float32'):
        F.scatter_add(a, 0, numpy.zeros(4, numpy.float32))
    with pytest.raises(TypeError, match='scatter_add: slices must hold'):
        F.scatter_add(a, 0.5, numpy.zeros(4))
