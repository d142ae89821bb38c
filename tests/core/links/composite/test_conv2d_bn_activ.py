"""Conv2DBNActiv: children, shapes, lazy channels, activation, gradient flow."""

import numpy
import pytest

from cvzoo.core import gradient_check
from cvzoo.core.config import using_config
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
