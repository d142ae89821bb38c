"""Normalize: values by hand, gradient check, finite gradient at an all-zero pixel."""

import numpy

from cvzoo.core import gradient_check
from cvzoo.core.variable import Parameter, Variable
from cvzoo.models.detection.ssd import normalize


def test_forward_by_hand():
    link = normalize.Normalize(2, initial=20.0)
    x = numpy.zeros((1, 2, 1, 2), numpy.float32)
    x[0, :, 0, 0] = [3, 4]
    y = link(x).array
    numpy.testing.assert_allclose(y[0, :, 0, 0], [20 * 3 / (5 + 1e-5), 20 * 4 / (5 + 1e-5)],
                                  rtol=1e-6)
    assert (y[0, :, 0, 1] == 0).all() and y.dtype == numpy.float32


def test_gradient_check_and_zero_pixel():
    rng = numpy.random.RandomState(0)
    x = rng.randn(2, 3, 2, 2)
    link = normalize.Normalize(3, initial=2.0)
    with link.init_scope():
        link.scale = Parameter(rng.uniform(1, 2, 3))  # float64 for the check
    gradient_check.check_backward(link, x, rng.randn(2, 3, 2, 2), params=(link.scale,),
                                  dtype=numpy.float64)
    x = Variable(numpy.zeros((1, 3, 2, 2), numpy.float32))
    x.array[0, :, 0, 0] = [1, 2, 3]
    y = normalize.Normalize(3)(x)
    y.grad = numpy.ones_like(y.array)
    y.backward()
    assert numpy.isfinite(x.grad).all()
