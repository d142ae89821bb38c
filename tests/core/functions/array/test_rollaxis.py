import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = [(2, 0), (0, 3), (0, 2), (1, 1), (-1, 1), (1, -1), (3, 0)]


@pytest.mark.parametrize('axis, start', CASES, ids=[str(c) for c in CASES])
def test_rollaxis(axis, start, rng):
    x = rng.standard_normal((2, 3, 4, 5))
    check_function(lambda x: F.rollaxis(x, axis, start), (x,),
                   lambda x: numpy.rollaxis(x, axis, start), double_backward=True)


def test_rollaxis_errors():
    with pytest.raises(ValueError, match='start=4 is out of range'):
        F.rollaxis(numpy.zeros((2, 3, 4)), 0, 4)
    with pytest.raises(ValueError, match='axis=3 is out of range'):
        F.rollaxis(numpy.zeros((2, 3, 4)), 3)
