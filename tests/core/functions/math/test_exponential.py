import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (), (0, 2)], ids=['matrix', 'scalar', 'empty'])
def test_exp(shape, rng):
    check_function(F.exp, (rng.standard_normal(shape),), numpy.exp, double_backward=True)


@pytest.mark.parametrize('shape', [(3, 4), ()], ids=['matrix', 'scalar'])
def test_log(shape, rng):
    x = rng.uniform(0.5, 2.0, shape)
    check_function(F.log, (x,), numpy.log, double_backward=True)
