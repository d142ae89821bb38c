"""GroupNormalization: forward against numpy, lazy size, gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check
from cvzoo.core.links.normalization.group_normalization import GroupNormalization

if not hasattr(F, 'group_normalization'):
    pytest.skip('F.group_normalization is not available yet', allow_module_level=True)


@pytest.mark.parametrize('size', [4, None], ids=['given', 'lazy'])
def test_forward(size):
    link = GroupNormalization(2, size)
    x = numpy.random.rand(3, 4, 2, 2).astype(numpy.float32)
    grouped = x.reshape(3, 2, -1).astype(numpy.float64)
    expected = (grouped - grouped.mean(-1, keepdims=True)) / numpy.sqrt(
        grouped.var(-1, keepdims=True) + 1e-5)
    numpy.testing.assert_allclose(link(x).array, expected.reshape(x.shape), atol=1e-4)
    assert link.gamma.shape == (4,)


def test_size_must_fit_groups():
    with pytest.raises(ValueError, match='size'):
        GroupNormalization(3, 4)


def test_gradient_check():
    link = GroupNormalization(2, 4)
    link.gamma.array[...] = [0.5, 1, 1.5, 2]
    x = numpy.random.randn(2, 4, 2)
    gradient_check.check_backward(link, x, numpy.random.randn(2, 4, 2),
                                  params=tuple(link.params()), atol=1e-4, rtol=1e-3)
