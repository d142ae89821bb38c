import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def _away_from_zero(rng, shape):
    return numpy.asarray(rng.uniform(0.2, 2.0, shape) * rng.choice([-1, 1], shape))


@pytest.mark.parametrize('shape', [(3, 4), (2, 3, 4, 5), (0, 3), ()],
                         ids=['2d', '4d', 'empty', 'scalar'])
def test_relu(shape, rng):
    x = _away_from_zero(rng, shape)
    check_function(F.relu, (x,), lambda x: numpy.maximum(x, 0), double_backward=True)


def test_relu_non_contiguous(rng):
    x = _away_from_zero(rng, (4, 6))[:, ::2]
    check_function(F.relu, (x,), lambda x: numpy.maximum(x, 0), double_backward=True)


def test_relu_retains_output_only(rng):
    x = _away_from_zero(rng, (3,))
    y = F.relu(Variable(x))
    assert y.creator._input_indexes_to_retain == ()
    assert y.creator._output_indexes_to_retain == (0,)


def test_relu_keeps_float32(rng):
    x = _away_from_zero(rng, (3,)).astype(numpy.float32)
    assert F.relu(x).dtype == numpy.float32


def test_one_gradient_node_serves_every_order(rng):
    # the first derivative (without and with double backprop) and the second are all
    # the same node, gy * (y > 0) with relu's output as a constant mask
    from cvzoo.core import backprop
    from cvzoo.core.functions.activation import relu as relu_module

    x = Variable(_away_from_zero(rng, (3, 4)))
    gy = Variable(rng.normal(size=(3, 4)))
    mask = x.array > 0
    for double in (False, True):
        y = F.relu(x)
        gx, = backprop.grad([y], [x], [gy], enable_double_backprop=double)
        numpy.testing.assert_array_equal(gx.array, gy.array * mask)
        assert (gx.creator is not None) == double
    assert type(gx.creator) is relu_module._ReLUGrad
    ggy = Variable(rng.normal(size=(3, 4)))
    ggx, = backprop.grad([gx], [gy], [ggy], enable_double_backprop=True)
    assert type(ggx.creator) is relu_module._ReLUGrad
    numpy.testing.assert_array_equal(ggx.array, ggy.array * mask)


def test_higher_orders_in_gy_keep_the_mask(rng):
    # gx = gy * (x > 0); the second and third derivatives in gy go through the same mask
    from cvzoo.core import backprop

    x = Variable(_away_from_zero(rng, (5,)))
    y = F.relu(x)
    gy = Variable(numpy.ones(5))
    gx, = backprop.grad([y], [x], [gy], enable_double_backprop=True)
    ggx, = backprop.grad([F.sum(gx * gx)], [gy], enable_double_backprop=True)
    numpy.testing.assert_array_equal(ggx.array, 2 * (x.array > 0))
    third, = backprop.grad([F.sum(ggx)], [gy])
    numpy.testing.assert_array_equal(third.array, 2 * (x.array > 0))


def _sum_away_from_zero(rng, shape):
    """a and b whose sum stays away from relu's kink (finite differences cross none)."""
    total = _away_from_zero(rng, shape)
    a = rng.normal(size=shape)
    return a, total - a


@pytest.mark.parametrize('shape', [(3, 4), (2, 3, 4, 5)], ids=['2d', '4d'])
def test_add_relu(shape, rng):
    from cvzoo.core.functions.activation.relu import add_relu

    check_function(add_relu, _sum_away_from_zero(rng, shape),
                   lambda a, b: numpy.maximum(a + b, 0), double_backward=True)


def test_add_relu_equals_relu_of_the_sum_exactly(rng):
    from cvzoo.core.functions.activation.relu import add_relu

    a, b = (Variable(v.astype(numpy.float32)) for v in _sum_away_from_zero(rng, (2, 3, 4, 5)))
    y = add_relu(a, b)
    gy = rng.normal(size=y.shape).astype(numpy.float32)
    y.grad = gy
    y.backward()
    got = [y.array, a.grad, b.grad]
    a.cleargrad()
    b.cleargrad()
    y = F.relu(a + b)
    y.grad = gy
    y.backward()
    for value, expected in zip(got, [y.array, a.grad, b.grad]):
        numpy.testing.assert_array_equal(value, expected)


def test_add_relu_refuses_differing_shapes():
    from cvzoo.core.functions.activation.relu import add_relu

    with pytest.raises(ValueError, match='add_relu: a and b must share shape and dtype'):
        add_relu(numpy.zeros((2, 3)), numpy.zeros((1, 3)))
