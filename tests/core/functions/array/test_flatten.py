import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(2, 3, 4), (), (0, 3)], ids=['3d', 'scalar', 'empty'])
def test_flatten(shape, rng):
    x = numpy.asarray(rng.standard_normal(shape))
    check_function(F.flatten, (x,), lambda x: x.ravel(), double_backward=True)


def test_flatten_non_contiguous(rng):
    x = rng.standard_normal((3, 4)).T
    check_function(F.flatten, (x,), lambda x: x.ravel(), double_backward=True)
