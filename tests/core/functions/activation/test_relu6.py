import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (2, 3, 4)], ids=['2d', '3d'])
def test_relu6(shape, rng):
    # values on both sides of both kinks (0 and 6), kept away from them
    x = rng.choice([-1.5, 0.5, 3.0, 5.5, 7.5], shape) + rng.uniform(-0.3, 0.3, shape)
    check_function(F.relu6, (x,), lambda x: numpy.clip(x, 0, 6), double_backward=True)
