"""Bias: learned or given bias broadcast from an axis."""

import numpy

from cvzoo.core import gradient_check
from cvzoo.core.links.connection.bias import Bias


def test_learned_bias():
    link = Bias(axis=1, shape=(3,))
    numpy.testing.assert_array_equal(link.b.array, 0)
    link.b.array[...] = [1, 2, 3]
    x = numpy.zeros((2, 3, 2), dtype=numpy.float32)
    numpy.testing.assert_array_equal(link(x).array[1, :, 1], [1, 2, 3])


def test_given_bias_on_last_axes():
    x = numpy.random.rand(2, 3, 4).astype(numpy.float32)
    b = numpy.random.rand(4).astype(numpy.float32)
    numpy.testing.assert_allclose(Bias(axis=2)(x, b).array, x + b, rtol=1e-6)


def test_gradient_check():
    link = Bias(axis=1, shape=(2,))
    gradient_check.check_backward(link, numpy.random.randn(3, 2), numpy.random.randn(3, 2),
                                  params=(link.b,))
