"""Convolution2D: shapes over stride/pad/dilate/groups, lazy channels, gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check, initializers
from cvzoo.core.links.connection.convolution_2d import Convolution2D

if not hasattr(F, 'convolution_2d'):
    pytest.skip('F.convolution_2d is not available yet', allow_module_level=True)


@pytest.mark.parametrize('args, kwargs, y_shape', [
    ((4, 6, 3), {}, (2, 6, 5, 5)),
    ((6, 3), {}, (2, 6, 5, 5)),
    ((4, 6, 3, 2, 1), {}, (2, 6, 4, 4)),
    ((None, 6, (3, 1)), {'pad': (1, 0)}, (2, 6, 7, 7)),
    ((4, 6, 3), {'pad': 2, 'dilate': 2}, (2, 6, 7, 7)),
    ((4, 6, 3), {'groups': 2, 'pad': 1}, (2, 6, 7, 7)),
], ids=['plain', 'lazy', 'stride-pad', 'rect-kernel', 'dilate', 'groups'])
def test_output_shape(args, kwargs, y_shape):
    link = Convolution2D(*args, **kwargs)
    y = link(numpy.random.rand(2, 4, 7, 7).astype(numpy.float32))
    assert y.shape == y_shape and y.dtype == numpy.float32
    assert link.in_channels == 4


def test_weight_shape_with_groups_and_errors():
    link = Convolution2D(4, 6, 3, groups=2)
    assert link.W.shape == (6, 2, 3, 3) and link.b.shape == (6,)
    with pytest.raises(ValueError, match='out_channels'):
        Convolution2D(4, 5, 3, groups=2)
    with pytest.raises(ValueError, match='in_channels'):
        Convolution2D(5, 6, 3, groups=2)
    lazy = Convolution2D(6, 3, groups=2)
    with pytest.raises(ValueError, match='in_channels'):
        lazy(numpy.zeros((1, 3, 5, 5), dtype=numpy.float32))


def test_forward_matches_numpy_1x1():
    link = Convolution2D(3, 2, 1, initial_bias=initializers.Constant(0.25))
    x = numpy.random.rand(2, 3, 4, 4).astype(numpy.float32)
    expected = numpy.einsum('oc,nchw->nohw', link.W.array[:, :, 0, 0], x) + 0.25
    numpy.testing.assert_allclose(link(x).array, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('kwargs', [{}, {'stride': 2, 'pad': 1}, {'groups': 2, 'nobias': True}],
                         ids=['plain', 'stride-pad', 'groups-nobias'])
def test_gradient_check(kwargs):
    link = Convolution2D(2, 2, 2, initial_bias=initializers.Normal(1.0), **kwargs)
    x = numpy.random.randn(2, 2, 4, 4)
    y_shape = link(x.astype(numpy.float32)).shape
    gradient_check.check_backward(link, x, numpy.random.randn(*y_shape),
                                  params=tuple(link.params()))
