import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (), (0, 2)], ids=['matrix', 'scalar', 'empty'])
def test_square(shape, rng):
    x = rng.standard_normal(shape)
    check_function(F.square, (x,), numpy.square, double_backward=True)


def test_square_non_contiguous(rng):
    x = rng.standard_normal((4, 6))[:, ::2]
    check_function(F.square, (x,), numpy.square, double_backward=True)


def test_square_rejects_ints():
    with pytest.raises(TypeError, match='square: x must be a float array'):
        F.square(numpy.arange(3))
