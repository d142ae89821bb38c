"""Deconvolution2D: shapes, outsize, lazy channels, gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check, initializers
from cvzoo.core.links.connection.deconvolution_2d import Deconvolution2D

if not hasattr(F, 'deconvolution_2d'):
    pytest.skip('F.deconvolution_2d is not available yet', allow_module_level=True)


@pytest.mark.parametrize('args, kwargs, y_shape', [
    ((4, 3, 3), {}, (2, 3, 7, 7)),
    ((3, 3), {}, (2, 3, 7, 7)),
    ((4, 3, 4, 2, 1), {}, (2, 3, 10, 10)),
    ((4, 3, 3, 2, 1), {'outsize': (10, 10)}, (2, 3, 10, 10)),
    ((4, 6, 3), {'groups': 2}, (2, 6, 7, 7)),
], ids=['plain', 'lazy', 'stride-pad', 'outsize', 'groups'])
def test_output_shape(args, kwargs, y_shape):
    link = Deconvolution2D(*args, **kwargs)
    y = link(numpy.random.rand(2, 4, 5, 5).astype(numpy.float32))
    assert y.shape == y_shape and y.dtype == numpy.float32
    assert link.in_channels == 4


def test_weight_shape():
    link = Deconvolution2D(4, 6, 3, groups=2)
    assert link.W.shape == (4, 3, 3, 3) and link.b.shape == (6,)


def test_gradient_check():
    link = Deconvolution2D(2, 2, 2, stride=2, initial_bias=initializers.Normal(1.0))
    x = numpy.random.randn(1, 2, 3, 3)
    gradient_check.check_backward(link, x, numpy.random.randn(1, 2, 6, 6),
                                  params=tuple(link.params()))
