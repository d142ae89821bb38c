"""DepthwiseConvolution2D: shapes, lazy channels, gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check, initializers
from cvzoo.core.links.connection.depthwise_convolution_2d import DepthwiseConvolution2D

if not hasattr(F, 'depthwise_convolution_2d'):
    pytest.skip('F.depthwise_convolution_2d is not available yet', allow_module_level=True)


@pytest.mark.parametrize('in_channels', [3, None], ids=['given', 'lazy'])
def test_output_shape(in_channels):
    link = DepthwiseConvolution2D(in_channels, 2, 3, pad=1)
    y = link(numpy.random.rand(2, 3, 5, 5).astype(numpy.float32))
    assert y.shape == (2, 6, 5, 5)
    assert link.W.shape == (2, 3, 3, 3) and link.b.shape == (6,)


def test_gradient_check():
    link = DepthwiseConvolution2D(2, 2, 2, initial_bias=initializers.Normal(1.0))
    x = numpy.random.randn(1, 2, 3, 3)
    gradient_check.check_backward(link, x, numpy.random.randn(1, 4, 2, 2),
                                  params=tuple(link.params()))
