import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = {
    'int': 1,
    'pair': (1, 2),
    'per_axis': ((0, 0), (2, 1), (0, 3)),
    'zero': 0,
    'per_axis_single': ((1,), (0,), (2,)),
}


@pytest.mark.parametrize('case', sorted(CASES))
@pytest.mark.parametrize('value', [0, -1.5], ids=['zeros', 'constant'])
def test_pad(case, value, rng):
    pad_width = CASES[case]
    x = rng.standard_normal((2, 3, 2))
    check_function(lambda x: F.pad(x, pad_width, constant_values=value), (x,),
                   lambda x: numpy.pad(x, pad_width, constant_values=value),
                   double_backward=True)


def test_pad_empty_batch():
    y = F.pad(numpy.zeros((0, 3), numpy.float32), ((0, 0), (1, 1)))
    assert y.shape == (0, 5) and y.dtype == numpy.float32


def test_pad_errors():
    x = numpy.zeros((2, 3))
    with pytest.raises(ValueError, match="mode must be 'constant'.*'edge'"):
        F.pad(x, 1, mode='edge')
    with pytest.raises(ValueError, match='must not be negative'):
        F.pad(x, -1)
    with pytest.raises(ValueError, match='does not fit an array of 2 axes'):
        F.pad(x, ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(TypeError, match='pad_width must be an int'):
        F.pad(x, 1.5)
