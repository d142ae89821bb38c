"""Conv2DBNActiv: children, shapes, lazy channels, activation, gradient flow."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check
from cvzoo.core.config import no_backprop_mode, using_config
from cvzoo.core.links.composite.conv2d_bn_activ import Conv2DBNActiv


@pytest.mark.parametrize('args', [(3, 4, 3), (4, 3)], ids=['given', 'lazy'])
def test_output_and_children(args):
    link = Conv2DBNActiv(*args, pad=1)
    y = link(numpy.random.rand(2, 3, 5, 5).astype(numpy.float32))
    assert y.shape == (2, 4, 5, 5) and (y.array >= 0).all()
    assert [p for p, _ in link.namedparams()] == ['/conv/W', '/bn/gamma', '/bn/beta']
    assert link.conv.b is None


def test_no_activation_and_bn_kwargs():
    link = Conv2DBNActiv(3, 4, 1, activ=None, bn_kwargs={'eps': 1e-3, 'decay': 0.5})
    assert link.bn.eps == 1e-3 and link.bn.decay == 0.5
    with using_config('train', True):
        y = link(numpy.random.rand(2, 3, 3, 3).astype(numpy.float32))
    assert (y.array < 0).any()


def test_gradient_check_test_mode():
    link = Conv2DBNActiv(2, 2, 2, activ=None, dilate=1, groups=2)
    # NOTE: check_backward casts parameters to float64; the averages must follow.
    link.bn.avg_mean = numpy.array([0.1, -0.1])
    link.bn.avg_var = numpy.array([0.5, 2.0])
    x = numpy.random.randn(1, 2, 3, 3)
    with using_config('train', False):
        gradient_check.check_backward(link, x, numpy.random.randn(1, 2, 2, 2),
                                      params=tuple(link.params()))


def _link_with_statistics(rng, activ, **kwargs):
    link = Conv2DBNActiv(3, 4, 3, pad=1, activ=activ, **kwargs)
    link.bn.gamma.array = rng.uniform(0.5, 2, 4).astype(numpy.float32)
    link.bn.beta.array = rng.normal(size=4).astype(numpy.float32)
    link.bn.avg_mean = rng.normal(size=4).astype(numpy.float32)
    link.bn.avg_var = rng.uniform(0.5, 2, 4).astype(numpy.float32)
    return link


def _plain(link, x):
    h = link.bn(link.conv(x))
    return h if link.activ is None else link.activ(h)


@pytest.mark.parametrize('activ', [F.relu, None], ids=['relu', 'none'])
@pytest.mark.parametrize('batch', [1, 3])
def test_inference_in_place_equals_the_plain_path(activ, batch, rng):
    # In inference the link normalises and rectifies the convolution output in place;
    # the result must be bit for bit the one of bn(conv(x)) and relu.
    link = _link_with_statistics(rng, activ)
    x = rng.normal(size=(batch, 3, 6, 5)).astype(numpy.float32)
    with using_config('train', False), no_backprop_mode():
        assert link._in_place_inference()
        expected = _plain(link, x).array
        y = link(x)
    assert y.creator is None and y.dtype == numpy.float32
    numpy.testing.assert_array_equal(y.array, expected)
    assert (expected < 0).any() == (activ is None)


def test_in_place_only_without_graph_in_test_mode(rng):
    link = _link_with_statistics(rng, F.relu)
    with using_config('train', False):
        assert not link._in_place_inference()  # a graph is recorded: keep every node
        y = link(rng.normal(size=(2, 3, 4, 4)).astype(numpy.float32))
        assert y.creator is not None
    with no_backprop_mode():
        assert not link._in_place_inference()  # training statistics
    other = _link_with_statistics(rng, F.sigmoid)
    with using_config('train', False), no_backprop_mode():
        assert not other._in_place_inference()


def test_in_place_inference_keeps_the_promotion_of_float64_statistics(rng):
    link = _link_with_statistics(rng, F.relu)
    link.bn.avg_var = link.bn.avg_var.astype(numpy.float64)
    x = rng.normal(size=(2, 3, 4, 4)).astype(numpy.float32)
    with using_config('train', False), no_backprop_mode():
        expected = _plain(link, x).array
        y = link(x)
    assert y.dtype == expected.dtype == numpy.float64
    numpy.testing.assert_array_equal(y.array, expected)


def test_in_place_inference_initialises_lazy_parameters(rng):
    link = Conv2DBNActiv(4, 3, pad=1)
    x = rng.normal(size=(2, 3, 5, 5)).astype(numpy.float32)
    with using_config('train', False), no_backprop_mode():
        y = link(x)
        assert link.conv.W.shape == (4, 3, 3, 3)
        numpy.testing.assert_array_equal(y.array, _plain(link, x).array)
