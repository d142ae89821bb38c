import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (2, 1, 5), ()], ids=['2d', '3d', 'scalar'])
def test_squared_difference(shape, rng):
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    check_function(F.squared_difference, (x, y), lambda x, y: (x - y) ** 2,
                   double_backward=True)


def test_squared_difference_shapes_must_match():
    with pytest.raises(ValueError, match=r'\(2,\) and \(3,\)'):
        F.squared_difference(numpy.zeros(2), numpy.zeros(3))
