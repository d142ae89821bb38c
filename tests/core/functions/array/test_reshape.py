import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = [((2, 6), (3, 4)), ((2, 6), (-1,)), ((2, 3, 2), (6, -1)), ((0, 3), (3, 0))]


@pytest.mark.parametrize('src, dst', CASES, ids=[f'{a}->{b}' for a, b in CASES])
def test_reshape(src, dst, rng):
    check_function(lambda x: F.reshape(x, dst), (rng.standard_normal(src),),
                   lambda x: x.reshape(dst), double_backward=True)


def test_reshape_of_non_contiguous_view(rng):
    x = rng.standard_normal((4, 3)).T
    check_function(lambda x: F.reshape(x, (2, 6)), (x,), lambda x: x.reshape(2, 6))


@pytest.mark.parametrize('dst', [(5,), (-1, -1), (4, -1)], ids=['size', 'two-unknown', 'indivisible'])
def test_bad_shape_is_named(dst, rng):
    with pytest.raises(ValueError, match='cannot reshape an array of shape'):
        F.reshape(rng.standard_normal((2, 3)), dst)
