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
