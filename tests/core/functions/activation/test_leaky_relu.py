import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('slope', [0.2, 0.0, -0.5], ids=['default', 'zero', 'negative'])
def test_leaky_relu(slope, rng):
    x = rng.uniform(0.2, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    check_function(lambda x: F.leaky_relu(x, slope), (x,),
                   lambda x: numpy.where(x > 0, x, slope * x), double_backward=True)


def test_leaky_relu_default_slope():
    assert F.leaky_relu(numpy.array([-1.0])).array[0] == pytest.approx(-0.2)


def test_leaky_relu_bad_slope():
    with pytest.raises(TypeError, match='slope'):
        F.leaky_relu(numpy.zeros(2), slope='0.1')
