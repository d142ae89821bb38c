import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('shape', [(3, 4), (2, 3, 2), (4,), (0, 3)],
                         ids=['2d', '3d', '1d', 'empty_batch'])
def test_batch_l2_norm_squared(shape, rng):
    x = rng.standard_normal(shape)
    check_function(F.batch_l2_norm_squared, (x,),
                   lambda x: (x.reshape(len(x), -1 if len(x) else 1) ** 2).sum(axis=1),
                   double_backward=True)


def test_batch_l2_norm_squared_errors():
    with pytest.raises(ValueError, match='must have a batch axis'):
        F.batch_l2_norm_squared(numpy.zeros(()))
