import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

REPS = {'int': 2, 'same_ndim': (2, 3), 'shorter': (3,), 'longer': (2, 1, 2), 'zero': (0, 2),
        'ones': (1, 1)}


@pytest.mark.parametrize('case', sorted(REPS))
def test_tile(case, rng):
    reps = REPS[case]
    x = rng.standard_normal((2, 3))
    check_function(lambda x: F.tile(x, reps), (x,), lambda x: numpy.tile(x, reps),
                   double_backward=True)


def test_tile_scalar(rng):
    x = numpy.asarray(rng.standard_normal(()))
    check_function(lambda x: F.tile(x, (2, 2)), (x,), lambda x: numpy.tile(x, (2, 2)))


def test_tile_errors():
    with pytest.raises(ValueError, match=r'reps must be non-negative ints, got \(-1,\)'):
        F.tile(numpy.zeros(2), (-1,))
