import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('axis', [None, 0, -1, (0, 2), 2], ids=['none', '0', 'minus1', '0_2', '2'])
def test_squeeze(axis, rng):
    x = rng.standard_normal((1, 3, 1, 1))
    check_function(lambda x: F.squeeze(x, axis), (x,), lambda x: numpy.squeeze(x, axis),
                   double_backward=True)


def test_squeeze_errors():
    with pytest.raises(ValueError, match=r'axis 1 of x \(shape \(1, 3\)\) has size 3, not 1'):
        F.squeeze(numpy.zeros((1, 3)), 1)
    with pytest.raises(ValueError, match='axis 2 is out of range'):
        F.squeeze(numpy.zeros((1, 3)), 2)
