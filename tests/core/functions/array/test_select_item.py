import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(4, 3), (1, 5), (0, 3)], ids=['batch', 'one', 'empty'])
def test_select_item(shape, rng):
    x = rng.standard_normal(shape)
    t = rng.integers(0, shape[1], shape[0]).astype(numpy.int32)
    check_function(F.select_item, (x, t), lambda x, t: x[numpy.arange(len(t)), t],
                   double_backward=True)


def test_select_item_non_contiguous(rng):
    x = rng.standard_normal((3, 8))[:, ::2]
    t = numpy.array([3, 0, 3])
    check_function(F.select_item, (x, t), lambda x, t: x[numpy.arange(3), t])


def test_select_item_errors():
    x = numpy.zeros((2, 3))
    with pytest.raises(ValueError, match=r'entries of t must be in \[0, 3\), got values from 0 to 3'):
        F.select_item(x, numpy.array([0, 3]))
    with pytest.raises(ValueError, match=r't must have shape \(2,\)'):
        F.select_item(x, numpy.array([0]))
    with pytest.raises(TypeError, match='t must be an int array'):
        F.select_item(x, numpy.array([0.0, 1.0]))
    with pytest.raises(ValueError, match='x must be 2-D'):
        F.select_item(numpy.zeros(3), numpy.array([0, 1, 2]))
