"""Scale: learned or given scale broadcast from an axis, optional bias."""

import numpy
import pytest

from cvzoo.core import gradient_check
from cvzoo.core.links.connection.scale import Scale


def test_learned_scale_with_bias():
    link = Scale(axis=1, W_shape=(3,), bias_term=True)
    link.W.array[...] = [1, 2, 3]
    link.bias.b.array[...] = [0.5, 0, -1]
    x = numpy.random.rand(2, 3, 4).astype(numpy.float32)
    expected = x * numpy.array([1, 2, 3], 'f')[:, None] + numpy.array([0.5, 0, -1], 'f')[:, None]
    numpy.testing.assert_allclose(link(x).array, expected, rtol=1e-6, atol=1e-6)
    assert [p for p, _ in link.namedparams()] == ['/W', '/bias/b']


def test_given_scale():
    x = numpy.random.rand(2, 3, 4).astype(numpy.float32)
    W = numpy.random.rand(3, 4).astype(numpy.float32)
    numpy.testing.assert_allclose(Scale(axis=1)(x, W).array, x * W, rtol=1e-6, atol=1e-6)


def test_shape_mismatch_is_reported():
    with pytest.raises(ValueError, match='Scale: W'):
        Scale(axis=1, W_shape=(4,))(numpy.zeros((2, 3), 'f'))
    with pytest.raises(ValueError, match='bias_shape'):
        Scale(bias_term=True)


def test_gradient_check():
    link = Scale(axis=1, W_shape=(2,), bias_term=True)
    link.bias.b.array[...] = [0.3, -0.2]
    x = numpy.random.randn(3, 2, 2)
    gradient_check.check_backward(link, x, numpy.random.randn(3, 2, 2),
                                  params=tuple(link.params()))
