import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = {'1d': [(2,), (3,)], '2d': [(2, 1), (2, 3)], '3d': [(2, 1, 4), (2, 2, 4)]}


@pytest.mark.parametrize('case', sorted(CASES))
def test_hstack(case, rng):
    xs = tuple(rng.standard_normal(s) for s in CASES[case])
    check_function(lambda *xs: F.hstack(xs), xs, lambda *xs: numpy.hstack(xs),
                   double_backward=True)


def test_hstack_errors():
    with pytest.raises(ValueError, match='at least one'):
        F.hstack([])
    with pytest.raises(ValueError, match='hstack|concat'):
        F.hstack([numpy.zeros((2, 1)), numpy.zeros((3, 1))])
