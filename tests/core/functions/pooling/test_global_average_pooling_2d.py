import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


@pytest.mark.parametrize('keepdims', [False, True], ids=['flat', 'keepdims'])
@pytest.mark.parametrize('shape', [(2, 3, 4, 5), (1, 2, 1, 1), (0, 3, 2, 2)],
                         ids=['rect', 'one_pixel', 'empty_batch'])
def test_global_average_pooling_2d(shape, keepdims, rng):
    x = rng.standard_normal(shape)
    check_function(lambda x: F.global_average_pooling_2d(x, keepdims),
                   (x,), lambda x: x.mean(axis=(2, 3), keepdims=keepdims),
                   double_backward=True)


def test_equals_average_pooling_over_the_whole_map(rng):
    x = rng.standard_normal((2, 3, 5, 7)).astype(numpy.float32)
    numpy.testing.assert_allclose(F.global_average_pooling_2d(x, keepdims=True).array,
                                  F.average_pooling_2d(x, (5, 7)).array, rtol=1e-6)


def test_rejects_bad_shape():
    with pytest.raises(ValueError, match='H \\* W > 0'):
        F.global_average_pooling_2d(numpy.zeros((1, 2, 0, 3), dtype=numpy.float32))
    with pytest.raises(ValueError, match='x must be'):
        F.global_average_pooling_2d(numpy.zeros((2, 3), dtype=numpy.float32))
