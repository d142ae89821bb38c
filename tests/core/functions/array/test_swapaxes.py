import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = [(0, 1), (0, 2), (-1, 0), (1, 1)]


@pytest.mark.parametrize('axis1, axis2', CASES, ids=[str(c) for c in CASES])
def test_swapaxes(axis1, axis2, rng):
    x = rng.standard_normal((2, 3, 4))
    check_function(lambda x: F.swapaxes(x, axis1, axis2), (x,),
                   lambda x: numpy.swapaxes(x, axis1, axis2), double_backward=True)


def test_swapaxes_errors():
    with pytest.raises(ValueError, match=r'axis2=3 is out of range for x of shape \(2, 3\)'):
        F.swapaxes(numpy.zeros((2, 3)), 0, 3)
