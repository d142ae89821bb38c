import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (), (0, 2)], ids=['matrix', 'scalar', 'empty'])
def test_sqrt(shape, rng):
    x = rng.uniform(0.5, 3.0, shape)
    check_function(F.sqrt, (x,), numpy.sqrt, double_backward=True)


def test_sqrt_rejects_ints():
    with pytest.raises(TypeError, match='sqrt: x must be a float array, got dtype int64'):
        F.sqrt(numpy.arange(3, dtype=numpy.int64))
