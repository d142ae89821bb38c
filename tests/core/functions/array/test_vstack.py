import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = {'1d': [(3,), (3,)], '2d': [(1, 3), (2, 3)], 'mixed': [(3,), (2, 3)]}


@pytest.mark.parametrize('case', sorted(CASES))
def test_vstack(case, rng):
    xs = tuple(rng.standard_normal(s) for s in CASES[case])
    check_function(lambda *xs: F.vstack(xs), xs, lambda *xs: numpy.vstack(xs),
                   double_backward=True)


def test_vstack_errors():
    with pytest.raises(ValueError, match='at least one'):
        F.vstack([])
    with pytest.raises(ValueError, match=r'xs\[1\] has shape \(1, 2\)'):
        F.vstack([numpy.zeros(3), numpy.zeros(2)])
