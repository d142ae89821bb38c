import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

BOUNDS = [(-0.5, 0.5), (None, 0.3), (-0.3, None), (-5.0, 5.0)]


def _dodge(x, bounds, gap=0.05):
    """Move elements away from the bounds, where clip is not differentiable."""
    for bound in bounds:
        if bound is not None:
            near = numpy.abs(x - bound) < gap
            x[near] = bound + 2 * gap
    return x


@pytest.mark.parametrize('x_min, x_max', BOUNDS, ids=['both', 'upper', 'lower', 'wide'])
def test_clip(x_min, x_max, rng):
    x = _dodge(rng.uniform(-1, 1, (4, 5)), (x_min, x_max))
    check_function(lambda x: F.clip(x, x_min, x_max), (x,),
                   lambda x: numpy.clip(x, x_min, x_max), double_backward=True)


def test_clip_gradient_is_zero_outside():
    x = numpy.array([-2.0, 0.0, 2.0])
    from cvzoo.core import Variable

    v = Variable(x)
    F.sum(F.clip(v, -1.0, 1.0)).backward()
    numpy.testing.assert_array_equal(v.grad, [0.0, 1.0, 0.0])


def test_clip_bad_bounds():
    x = numpy.zeros(3)
    with pytest.raises(ValueError, match='x_min must be <= x_max, got x_min=1.0, x_max=0.0'):
        F.clip(x, 1.0, 0.0)
    with pytest.raises(ValueError, match='both None'):
        F.clip(x, None, None)
    with pytest.raises(TypeError, match="x_max must be a real number or None, got 'a'"):
        F.clip(x, 0.0, 'a')
