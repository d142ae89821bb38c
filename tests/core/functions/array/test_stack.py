import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('axis', [0, 1, 2, -1, -3], ids=['0', '1', '2', 'minus1', 'minus3'])
def test_stack(axis, rng):
    xs = tuple(rng.standard_normal((2, 3)) for _ in range(3))
    check_function(lambda *xs: F.stack(xs, axis), xs, lambda *xs: numpy.stack(xs, axis),
                   double_backward=True)


def test_stack_errors():
    with pytest.raises(ValueError, match=r'xs\[0\] has shape \(2,\) and xs\[1\] has shape \(3,\)'):
        F.stack((numpy.zeros(2), numpy.zeros(3)))
    with pytest.raises(ValueError, match=r'axis must be in \[-2, 1\].*got 2'):
        F.stack((numpy.zeros(2),), axis=2)
    with pytest.raises(ValueError, match='at least one'):
        F.stack(())
