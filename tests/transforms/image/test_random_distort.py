import colorsys

import numpy

from cvzoo.transforms import random_distort
from cvzoo.transforms.image import random_distort as module


def test_hsv_round_trip_and_matches_colorsys(rng):
    img = rng.uniform(0, 255, size=(3, 4, 5))
    hue, saturation, value = module._rgb_to_hsv(img)
    for y in range(4):
        for x in range(5):
            h, s, v = colorsys.rgb_to_hsv(*(img[:, y, x] / 255))
            assert abs(hue[y, x] / 360 - h) < 1e-9 or abs(abs(hue[y, x] / 360 - h) - 1) < 1e-9
            assert abs(saturation[y, x] - s) < 1e-9 and abs(value[y, x] / 255 - v) < 1e-9
    numpy.testing.assert_allclose(module._hsv_to_rgb(hue, saturation, value), img, atol=1e-9)


def test_grey_stays_grey_and_range_is_kept(rng):
    img = numpy.repeat(rng.uniform(0, 255, size=(1, 6, 6)), 3, axis=0).astype(numpy.float32)
    for _ in range(10):
        out = random_distort(img)
        assert out.dtype == numpy.float32 and out.shape == img.shape
        assert out.min() >= 0 and out.max() <= 255
        numpy.testing.assert_allclose(out[0], out[1], atol=1e-3)


def test_changes_colour_images(rng):
    img = rng.uniform(0, 255, size=(3, 6, 6)).astype(numpy.float32)
    assert any(not numpy.allclose(random_distort(img), img) for _ in range(10))
