import numpy
import pytest

import cvzoo.core.functions as F


@pytest.mark.parametrize('axis', [None, 0, -1], ids=['none', '0', 'minus1'])
def test_argmin(axis, rng):
    x = rng.standard_normal((3, 4))
    y = F.argmin(x, axis)
    assert y.dtype == numpy.int32 and not y.requires_grad
    numpy.testing.assert_array_equal(y.array, x.argmin(axis=axis))


def test_argmin_ties_pick_the_first():
    assert F.argmin(numpy.array([3.0, 1.0, 1.0])).item() == 1


def test_argmin_errors():
    with pytest.raises(ValueError, match='argmin: cannot reduce axis 1 of size 0'):
        F.argmin(numpy.zeros((2, 0)), axis=1)
