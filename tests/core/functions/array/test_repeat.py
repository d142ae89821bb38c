import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = {
    'flat': (2, None),
    'axis0': (3, 0),
    'axis1_counts': ([1, 0, 2], 1),
    'negative_axis': (2, -1),
    'zero': (0, 0),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_repeat(case, rng):
    repeats, axis = CASES[case]
    x = rng.standard_normal((2, 3))
    check_function(lambda x: F.repeat(x, repeats, axis), (x,),
                   lambda x: numpy.repeat(x, repeats, axis), double_backward=True)


def test_repeat_errors():
    x = numpy.zeros((2, 3))
    with pytest.raises(ValueError, match='one int or 3 of them'):
        F.repeat(x, [1, 2], 1)
    with pytest.raises(ValueError, match='non-negative'):
        F.repeat(x, -1, 1)
    with pytest.raises(ValueError, match='axis 2 is out of range'):
        F.repeat(x, 1, 2)
