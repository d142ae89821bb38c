"""check_autocast fails on each kind of mistake it is there to catch."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import FunctionNode
from cvzoo.core.config import config
from cvzoo.testing import check_autocast


class _CastWithoutGradientCast(FunctionNode):
    """A cast to float16 whose backward forgets to cast the gradient back."""

    def forward(self, inputs):
        return inputs[0].astype(numpy.float16),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 1.0,


def _linear_with_bad_cast(x, W):
    if config.autocast is None:
        return F.linear(x, W)
    x16, = _CastWithoutGradientCast().apply((x,))
    return F.linear(x16, W)


def _linear_off_by_a_percent(x, W):
    y = F.linear(x, W)
    return y * 1.01 if config.autocast is not None else y


def _inputs():
    rng = numpy.random.RandomState(0)
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4))


def test_a_gradient_in_the_wrong_dtype_fails():
    with pytest.raises(AssertionError, match='gradient 0: dtype float16, expected float32'):
        check_autocast(_linear_with_bad_cast, _inputs(), 'float16', devices=['cpu'])


def test_an_output_left_in_float32_fails():
    def linear_in_float32(x, W):
        return F.linear(F.cast(x, numpy.float64), F.cast(W, numpy.float64))

    with pytest.raises(AssertionError, match='output 0: dtype float64, expected float16'):
        check_autocast(linear_in_float32, _inputs(), 'float16', devices=['cpu'])


def test_a_wrong_value_fails():
    with pytest.raises(AssertionError, match='output 0: max abs error'):
        check_autocast(_linear_off_by_a_percent, _inputs(), 'float16', devices=['cpu'])


def test_a_right_function_passes():
    check_autocast(F.linear, _inputs(), 'float16', devices=['cpu'])
