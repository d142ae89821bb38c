"""random_scale: one random factor for both sides, reported so labels and boxes can follow."""

import numpy
import pytest

from cvzoo.transforms import random_scale, resize, resize_bbox


def test_factor_in_range_and_output_size(rng):
    img = rng.uniform(0, 255, size=(3, 20, 30)).astype(numpy.float32)
    factors = []
    for _ in range(20):
        out, param = random_scale(img, (0.5, 1.5), return_param=True)
        assert 0.5 <= param['scale'] <= 1.5
        assert param['size'] == (round(20 * param['scale']), round(30 * param['scale']))
        assert out.shape == (3,) + param['size'] and out.dtype == numpy.float32
        factors.append(param['scale'])
    assert numpy.std(factors) > 0.1  # really drawn, not fixed


def test_equals_resize_to_the_reported_size(rng):
    img = rng.uniform(0, 255, size=(1, 9, 7)).astype(numpy.float32)
    out, param = random_scale(img, (1.2, 1.8), interpolation='nearest', return_param=True)
    numpy.testing.assert_array_equal(out, resize(img, param['size'], 'nearest'))


def test_label_and_boxes_follow():
    img = numpy.zeros((3, 10, 20), numpy.float32)
    label = numpy.zeros((10, 20), numpy.int32)
    label[2:6, 4:12] = 3
    out, param = random_scale(img, (2, 2), return_param=True)
    assert param == {'scale': 2.0, 'size': (20, 40)}
    out_label = resize(label[None], param['size'], 'nearest')[0]
    assert out_label.dtype == numpy.int32 and (out_label == 3).sum() == 4 * (label == 3).sum()
    bbox = numpy.array([[4, 2, 12, 6]], numpy.float32)
    numpy.testing.assert_array_equal(resize_bbox(bbox, img.shape[1:], param['size']),
                                     [[8, 4, 24, 12]])


def test_tiny_factor_keeps_one_pixel():
    out = random_scale(numpy.ones((2, 3, 50), numpy.float32), (0.01, 0.01))
    assert out.shape == (2, 1, 1)


@pytest.mark.parametrize('scale_range', [(0, 1), (2, 1), (-1, 1), (1,)],
                         ids=['zero', 'reversed', 'negative', 'one_number'])
def test_bad_range_is_named(scale_range):
    with pytest.raises(ValueError, match='scale_range'):
        random_scale(numpy.ones((1, 2, 2), numpy.float32), scale_range)
