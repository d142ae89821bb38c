import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = {
    'axis1': ([(2, 3, 4), (2, 1, 4), (2, 2, 4)], 1),
    'axis0': ([(1, 3), (2, 3)], 0),
    'last': ([(2, 3), (2, 1)], -1),
    'single': ([(2, 3)], 1),
    'empty_piece': ([(2, 0), (2, 3)], 1),
    'empty_batch': ([(0, 2), (0, 3)], 1),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_concat(case, rng):
    shapes, axis = CASES[case]
    xs = tuple(rng.standard_normal(s) for s in shapes)
    check_function(lambda *xs: F.concat(xs, axis), xs,
                   lambda *xs: numpy.concatenate(xs, axis), double_backward=True)


def test_concat_non_contiguous(rng):
    a = rng.standard_normal((4, 3))[::2]
    b = rng.standard_normal((3, 2)).T
    check_function(lambda a, b: F.concat((a, b)), (a, b),
                   lambda a, b: numpy.concatenate((a, b), 1), double_backward=True)


def test_concat_errors_name_axis_and_shapes():
    a, b = numpy.zeros((2, 3)), numpy.zeros((3, 3))
    with pytest.raises(ValueError, match=r'every axis but axis 1, xs\[0\] has shape \(2, 3\) '
                                         r'and xs\[1\] has shape \(3, 3\)'):
        F.concat((a, b), axis=1)
    with pytest.raises(ValueError, match='axis 2 is out of range'):
        F.concat((a, a), axis=2)
    with pytest.raises(ValueError, match='at least one'):
        F.concat([])
    with pytest.raises(TypeError, match='xs must share a dtype'):
        F.concat((a, a.astype(numpy.float32)))
    with pytest.raises(ValueError, match=r'xs\[1\] has shape \(2, 3, 1\)'):
        F.concat((a, a[..., None]), axis=1)
