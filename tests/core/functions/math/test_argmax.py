import numpy
import pytest

import cvzoo.core.functions as F


@pytest.mark.parametrize('axis', [None, 0, 1, -1], ids=['none', '0', '1', 'minus1'])
def test_argmax(axis, rng):
    x = rng.standard_normal((3, 4)).astype(numpy.float32)
    y = F.argmax(x, axis)
    assert y.dtype == numpy.int32 and not y.requires_grad
    numpy.testing.assert_array_equal(y.array, x.argmax(axis=axis))


def test_argmax_ties_pick_the_first():
    assert F.argmax(numpy.array([1.0, 3.0, 3.0])).item() == 1


def test_argmax_errors():
    with pytest.raises(ValueError, match='argmax: axis 2 is out of range'):
        F.argmax(numpy.zeros((2, 2)), axis=2)
    with pytest.raises(TypeError, match='argmax: axis must be None or an int'):
        F.argmax(numpy.zeros((2, 2)), axis=(0, 1))
    with pytest.raises(ValueError, match='argmax: x is empty'):
        F.argmax(numpy.zeros((0, 2)))
