import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (5,)], ids=['2d', '1d'])
def test_mean_squared_error(shape, rng):
    x0, x1 = rng.normal(size=shape), rng.normal(size=shape)
    check_function(F.mean_squared_error, (x0, x1),
                   lambda a, b: numpy.asarray(((a - b) ** 2).mean(), dtype=a.dtype),
                   double_backward=True)


def test_mean_squared_error_bad_shape():
    with pytest.raises(ValueError, match='shape'):
        F.mean_squared_error(numpy.zeros(3), numpy.zeros(4))
