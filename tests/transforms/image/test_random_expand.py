import numpy
import pytest

from cvzoo.transforms import random_expand


def test_image_is_pasted_and_rest_filled(rng):
    img = rng.uniform(1, 2, size=(3, 4, 6)).astype(numpy.float32)
    out, param = random_expand(img, max_ratio=3, fill=(10, 20, 30), return_param=True)
    assert out.dtype == numpy.float32
    assert out.shape == (3, int(4 * param['ratio']), int(6 * param['ratio']))
    y, x = param['y_offset'], param['x_offset']
    numpy.testing.assert_array_equal(out[:, y:y + 4, x:x + 6], img)
    rest = out.copy()
    rest[:, y:y + 4, x:x + 6] = numpy.array([10, 20, 30]).reshape(3, 1, 1)
    numpy.testing.assert_array_equal(rest, numpy.array([10, 20, 30]).reshape(3, 1, 1)
                                     * numpy.ones_like(out))


def test_ratio_one_and_bad_ratio():
    img = numpy.ones((1, 2, 2), numpy.float32)
    out, param = random_expand(img, max_ratio=1, return_param=True)
    assert param == {'ratio': 1.0, 'y_offset': 0, 'x_offset': 0}
    with pytest.raises(ValueError, match='max_ratio'):
        random_expand(img, max_ratio=0.5)
