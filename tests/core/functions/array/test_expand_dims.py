import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('axis', [0, 1, 2, -1, -3], ids=['0', '1', '2', 'minus1', 'minus3'])
def test_expand_dims(axis, rng):
    x = rng.standard_normal((2, 3))
    check_function(lambda x: F.expand_dims(x, axis), (x,),
                   lambda x: numpy.expand_dims(x, axis), double_backward=True)


def test_expand_dims_errors():
    with pytest.raises(ValueError, match=r'axis must be in \[-3, 2\] for x of shape \(2, 3\), got 3'):
        F.expand_dims(numpy.zeros((2, 3)), 3)
    with pytest.raises(TypeError, match='axis must be an int'):
        F.expand_dims(numpy.zeros((2, 3)), (0,))
