import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.config import using_config
from cvzoo.core.variable import Variable


def test_test_mode_is_identity(rng):
    x = Variable(rng.normal(size=(3, 4)))
    with using_config('train', False):
        y = F.dropout(x, 0.5)
    assert y is x


def test_train_mode_drops_and_scales(rng):
    x = numpy.ones((100, 100), dtype=numpy.float32)
    y = F.dropout(x, 0.25).array
    assert y.dtype == numpy.float32
    assert set(numpy.unique(y)) <= {0.0, numpy.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02


def test_expectation_is_unchanged(rng):
    x = rng.uniform(1, 2, (50, 200))
    y = F.dropout(x, 0.6).array
    assert abs(y.mean() / x.mean() - 1) < 0.03


def test_backward_uses_the_same_mask(rng):
    x = Variable(rng.normal(size=(5, 6)))
    y = F.dropout(x, 0.5)
    gy = rng.normal(size=(5, 6))
    y.grad = gy
    y.backward()
    mask = y.array / x.array
    numpy.testing.assert_allclose(x.grad, gy * mask)


def test_double_backprop(rng):
    from cvzoo.core import backprop

    x = Variable(rng.normal(size=(4, 4)))
    y = F.dropout(x, 0.5)
    gx, = backprop.grad([F.sum(y * y)], [x], enable_double_backprop=True)
    ggx, = backprop.grad([F.sum(gx)], [x])
    mask = y.array / x.array
    numpy.testing.assert_allclose(ggx.array, 2 * mask * mask)


def test_mask_is_not_an_input_or_output(rng):
    x = Variable(rng.normal(size=(3,)))
    y = F.dropout(x)
    node = y.creator
    assert node._input_indexes_to_retain == () and node._output_indexes_to_retain == ()
    assert node.mask is not None and not numpy.shares_memory(node.mask, y.array)


@pytest.mark.parametrize('ratio', [1.0, -0.1, '0.5'], ids=['one', 'negative', 'string'])
def test_bad_ratio(ratio):
    with pytest.raises(ValueError, match='ratio'):
        F.dropout(numpy.zeros(3), ratio)
