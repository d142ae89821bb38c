"""DilatedConvolution2D: Chainer's argument order, shapes, gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check, initializers
from cvzoo.core.links.connection.dilated_convolution_2d import DilatedConvolution2D

if not hasattr(F, 'dilated_convolution_2d'):
    pytest.skip('F.dilated_convolution_2d is not available yet', allow_module_level=True)


def test_output_shape_and_argument_order():
    link = DilatedConvolution2D(3, 4, 3, 1, 2, 2)
    assert link.dilate == 2
    y = link(numpy.random.rand(2, 3, 7, 7).astype(numpy.float32))
    assert y.shape == (2, 4, 7, 7)
    assert DilatedConvolution2D(4, 3, pad=0, dilate=3)(numpy.zeros((1, 2, 7, 7), 'f')).shape \
        == (1, 4, 1, 1)


def test_gradient_check():
    link = DilatedConvolution2D(2, 2, 2, dilate=2, initial_bias=initializers.Normal(1.0))
    x = numpy.random.randn(1, 2, 5, 5)
    gradient_check.check_backward(link, x, numpy.random.randn(1, 2, 3, 3),
                                  params=tuple(link.params()))
