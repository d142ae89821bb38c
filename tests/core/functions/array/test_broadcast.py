import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = [((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((), (2, 2)), ((1, 1), (1, 1))]


@pytest.mark.parametrize('src, dst', CASES, ids=[f'{a}->{b}' for a, b in CASES])
def test_broadcast_to(src, dst, rng):
    check_function(lambda x: F.broadcast_to(x, dst), (rng.standard_normal(src),),
                   lambda x: numpy.broadcast_to(x, dst), double_backward=True)


@pytest.mark.parametrize('src, dst', CASES, ids=[f'{b}->{a}' for a, b in CASES])
def test_sum_to(src, dst, rng):
    def expected(x):
        lead = len(dst) - len(src)
        y = x.sum(axis=tuple(range(lead))) if lead else x
        axes = tuple(i for i, n in enumerate(src) if n == 1 and y.shape[i] != 1)
        return numpy.asarray(y.sum(axis=axes, keepdims=True) if axes else y)

    check_function(lambda x: F.sum_to(x, src), (rng.standard_normal(dst),), expected,
                   double_backward=True)


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match=r'cannot broadcast shape \(3,\) to \(4,\)'):
        F.broadcast_to(numpy.zeros(3, numpy.float32), (4,))
    with pytest.raises(ValueError, match='sum_to'):
        F.sum_to(numpy.zeros(3, numpy.float32), (4,))
