"""PReLU: one slope or one per channel; gradients through the slope."""

import numpy
import pytest

from cvzoo.core import gradient_check
from cvzoo.core.links.activation.prelu import PReLU


def _dodge(x):
    """Move inputs away from 0, where PReLU is not differentiable."""
    return numpy.where(numpy.abs(x) < 0.1, 0.5, x)


@pytest.mark.parametrize('shape', [(), (3,)], ids=['shared', 'per-channel'])
def test_forward(shape):
    link = PReLU(shape, init=0.1)
    x = _dodge(numpy.random.randn(2, 3, 2)).astype(numpy.float32)
    numpy.testing.assert_allclose(link(x).array, numpy.where(x > 0, x, 0.1 * x), rtol=1e-6)
    assert link.W.shape == shape


@pytest.mark.parametrize('shape', [(), (3,)], ids=['shared', 'per-channel'])
def test_gradient_check(shape):
    link = PReLU(shape, init=0.3)
    x = _dodge(numpy.random.randn(2, 3, 2))
    gradient_check.check_backward(link, x, numpy.random.randn(2, 3, 2), params=(link.W,))
