import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (2, 3, 2, 2)], ids=['2d', '4d'])
def test_tanh(shape, rng):
    x = rng.normal(size=shape)
    check_function(F.tanh, (x,), numpy.tanh, double_backward=True)


def test_tanh_retains_output_only(rng):
    y = F.tanh(Variable(rng.normal(size=(3,))))
    assert y.creator._input_indexes_to_retain == ()
    assert y.creator._output_indexes_to_retain == (0,)
