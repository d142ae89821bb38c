"""LayerNormalization: forward against numpy, Chainer's eps, lazy size, gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check
from cvzoo.core.links.normalization.layer_normalization import LayerNormalization

if not hasattr(F, 'layer_normalization'):
    pytest.skip('F.layer_normalization is not available yet', allow_module_level=True)


@pytest.mark.parametrize('size', [5, None], ids=['given', 'lazy'])
def test_forward(size):
    link = LayerNormalization(size)
    assert link.eps == 1e-6
    x = numpy.random.rand(3, 5).astype(numpy.float32)
    expected = (x - x.mean(-1, keepdims=True)) / numpy.sqrt(x.var(-1, keepdims=True) + 1e-6)
    numpy.testing.assert_allclose(link(x).array, expected, atol=1e-4)
    assert link.gamma.shape == (5,)


def test_gradient_check():
    link = LayerNormalization(3)
    link.beta.array[...] = [0.1, 0.2, 0.3]
    gradient_check.check_backward(link, numpy.random.randn(2, 3), numpy.random.randn(2, 3),
                                  params=tuple(link.params()), atol=1e-4, rtol=1e-3)
