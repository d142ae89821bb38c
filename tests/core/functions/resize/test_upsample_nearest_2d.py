import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _reference(x, sy, sx):
    return x.repeat(sy, axis=2).repeat(sx, axis=3)


@pytest.mark.parametrize('scale', [2, (3, 1), (1, 2), 1], ids=['2', '3x1', '1x2', 'identity'])
@pytest.mark.parametrize('shape', [(2, 3, 3, 2), (0, 2, 2, 2)], ids=['small', 'empty_batch'])
def test_upsample_nearest_2d(shape, scale, rng):
    sy, sx = (scale, scale) if isinstance(scale, int) else scale
    x = rng.standard_normal(shape)
    check_function(lambda x: F.upsample_nearest_2d(x, scale), (x,),
                   lambda x: _reference(x, sy, sx), double_backward=True)


def test_matches_unpooling_and_nearest_resize(rng):
    x = rng.standard_normal((1, 2, 3, 4)).astype(numpy.float32)
    y = F.upsample_nearest_2d(x, 2).array
    numpy.testing.assert_array_equal(y, F.unpooling_2d(x, 2, cover_all=False).array)
    numpy.testing.assert_array_equal(
        y, F.resize_images(x, (6, 8), 'nearest', align_corners=False).array)


def test_invalid_arguments():
    x = numpy.zeros((1, 1, 2, 2), dtype=numpy.float32)
    with pytest.raises(ValueError, match='scale'):
        F.upsample_nearest_2d(x, 0)
    with pytest.raises(TypeError, match='scale'):
        F.upsample_nearest_2d(x, 1.5)
    with pytest.raises(ValueError, match='x must be'):
        F.upsample_nearest_2d(x[0], 2)
