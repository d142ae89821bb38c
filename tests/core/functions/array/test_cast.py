import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable, gradient_check


@pytest.mark.parametrize('src, dst', [(numpy.float32, numpy.float64),
                                      (numpy.float64, numpy.float32),
                                      (numpy.float64, numpy.float16)],
                         ids=['32_to_64', '64_to_32', '64_to_16'])
def test_cast(src, dst, rng):
    x = rng.standard_normal((3, 4)).astype(src)
    y = F.cast(x, dst)
    assert y.dtype == dst
    numpy.testing.assert_array_equal(y.array, x.astype(dst))
    v = Variable(x)
    gy = rng.standard_normal((3, 4)).astype(dst)
    y = F.cast(v, dst)
    y.grad = gy
    y.backward()
    assert v.grad.dtype == src
    numpy.testing.assert_array_equal(v.grad, gy.astype(src))


def test_cast_gradient_check(rng):
    # float64 -> float64 is the identity; a cast to float32 and back exercises both nodes.
    x = rng.standard_normal((2, 3))
    gradient_check.check_backward(lambda x: F.cast(F.cast(x, numpy.float32), numpy.float64), x,
                                  rng.standard_normal((2, 3)), atol=1e-3, rtol=1e-3, eps=1e-2)


def test_cast_same_dtype_and_to_int():
    x = Variable(numpy.ones(2, numpy.float32))
    assert F.cast(x, numpy.float32) is x
    y = F.cast(x, numpy.int32)
    assert y.dtype == numpy.int32 and not y.requires_grad


def test_cast_error():
    with pytest.raises(TypeError, match='cast: dtype must be a numpy dtype'):
        F.cast(numpy.zeros(2), 'not a dtype')
