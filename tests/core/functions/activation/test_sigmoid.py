import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (2, 3, 2, 2), (0,)], ids=['2d', '4d', 'empty'])
def test_sigmoid(shape, rng):
    x = rng.normal(size=shape) * 2
    check_function(F.sigmoid, (x,), lambda x: 1 / (1 + numpy.exp(-x)), double_backward=True)


def test_sigmoid_large_inputs_are_finite():
    x = numpy.array([-1e4, -100.0, 100.0, 1e4], dtype=numpy.float32)
    y = F.sigmoid(x).array
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose(y, [0, 0, 1, 1], atol=1e-7)


def test_sigmoid_retains_output_only(rng):
    y = F.sigmoid(Variable(rng.normal(size=(3,))))
    assert y.creator._input_indexes_to_retain == ()
    assert y.creator._output_indexes_to_retain == (0,)
