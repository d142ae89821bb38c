import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def test_absolute_error(rng):
    x1 = rng.normal(size=(3, 4))
    x0 = x1 + rng.uniform(0.2, 1.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    check_function(F.absolute_error, (x0, x1), lambda a, b: numpy.abs(a - b),
                   double_backward=True)


def test_absolute_error_bad_shape():
    with pytest.raises(ValueError, match='shape'):
        F.absolute_error(numpy.zeros(3), numpy.zeros(4))
