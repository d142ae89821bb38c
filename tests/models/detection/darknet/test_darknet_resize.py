"""darknet_resize against a line-by-line transcription of Darknet's resize_image."""

import numpy
import pytest

from cvzoo.models.detection.darknet.darknet_resize import darknet_resize


def _c_resize(img, h, w):
    """Darknet's image.c resize_image with float32 arithmetic, loops as in C."""
    f = numpy.float32
    c, im_h, im_w = img.shape
    part = numpy.zeros((c, im_h, w), numpy.float32)
    resized = numpy.zeros((c, h, w), numpy.float32)
    w_scale = f(im_w - 1) / f(w - 1)
    h_scale = f(im_h - 1) / f(h - 1)
    for k in range(c):
        for r in range(im_h):
            for col in range(w):
                if col == w - 1 or im_w == 1:
                    part[k, r, col] = img[k, r, im_w - 1]
                else:
                    sx = f(col) * w_scale
                    ix = int(sx)
                    dx = sx - f(ix)
                    part[k, r, col] = (f(1) - dx) * img[k, r, ix] + dx * img[k, r, ix + 1]
    for k in range(c):
        for r in range(h):
            sy = f(r) * h_scale
            iy = int(sy)
            dy = sy - f(iy)
            resized[k, r] = (f(1) - dy) * part[k, iy]
            if r == h - 1 or im_h == 1:
                continue
            resized[k, r] += dy * part[k, iy + 1]
    return resized


@pytest.mark.parametrize('in_size, out_size', [
    ((7, 9), (5, 5)), ((5, 4), (8, 11)), ((12, 10), (12, 10)), ((1, 6), (3, 4)),
    ((6, 1), (4, 3)),
], ids=['down', 'up', 'same', 'one_row', 'one_column'])
def test_matches_c_code_exactly(in_size, out_size, rng):
    img = rng.uniform(0, 1, (3,) + in_size).astype(numpy.float32)
    numpy.testing.assert_array_equal(darknet_resize(img, out_size), _c_resize(img, *out_size))


def test_real_photo_size_to_320(rng):
    img = rng.uniform(0, 1, (1, 75, 100)).astype(numpy.float32)
    numpy.testing.assert_array_equal(darknet_resize(img, (32, 32)), _c_resize(img, 32, 32))


def test_rejects_bad_arguments():
    with pytest.raises(ValueError, match='img'):
        darknet_resize(numpy.zeros((4, 4), numpy.float32), (2, 2))
    with pytest.raises(ValueError, match='size'):
        darknet_resize(numpy.zeros((3, 4, 4), numpy.float32), (1, 2))
