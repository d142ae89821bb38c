"""ChainerCV's resize_contain and an OpenCV INTER_LINEAR transcription."""

import numpy
import pytest

from cvzoo.models.detection.yolo.resize_contain import (
    bilinear_half_pixel,
    contain_size,
    resize_contain,
)


def _opencv_linear_loop(img, size):
    """cv2.resize(INTER_LINEAR) on float data, one output pixel at a time (resize.cpp)."""
    C, H, W = img.shape
    out = numpy.zeros((C,) + tuple(size), numpy.float64)

    def taps(d, n_in, n_out):
        f = (d + 0.5) * n_in / n_out - 0.5
        s = int(numpy.floor(f))
        f -= s
        if s < 0:
            s, f = 0, 0.0
        if s >= n_in - 1:
            s, f = n_in - 1, 0.0
        return s, min(s + 1, n_in - 1), f

    for y in range(size[0]):
        y0, y1, fy = taps(y, H, size[0])
        for x in range(size[1]):
            x0, x1, fx = taps(x, W, size[1])
            top = (1 - fx) * img[:, y0, x0] + fx * img[:, y0, x1]
            bottom = (1 - fx) * img[:, y1, x0] + fx * img[:, y1, x1]
            out[:, y, x] = (1 - fy) * top + fy * bottom
    return out


@pytest.mark.parametrize('in_size, out_size', [((7, 9), (4, 5)), ((5, 6), (11, 13)),
                                               ((8, 8), (8, 3)), ((1, 6), (3, 4))],
                         ids=['down', 'up', 'one-axis', 'single-row'])
def test_bilinear_matches_the_opencv_rule(rng, in_size, out_size):
    img = rng.uniform(0, 1, (2,) + in_size).astype(numpy.float32)
    out = bilinear_half_pixel(img, out_size)
    assert out.dtype == numpy.float32 and out.shape == (2,) + out_size
    numpy.testing.assert_allclose(out, _opencv_linear_loop(img, out_size), rtol=1e-5,
                                  atol=1e-6)


@pytest.mark.parametrize('size, expected', [((208, 312), (208, 312)), ((500, 375), (416, 312)),
                                            ((300, 1000), (124, 416)), ((416, 416), (416, 416))],
                         ids=['small-not-enlarged', 'tall', 'wide', 'exact'])
def test_contain_size(size, expected):
    assert contain_size(size, (416, 416)) == expected


def test_resize_contain_places_the_image_in_the_middle(rng):
    img = rng.uniform(0, 1, (3, 5, 8)).astype(numpy.float32)
    out = resize_contain(img, (10, 11))
    # not enlarged; offsets (10 - 5) // 2 = 2 and (11 - 8) // 2 = 1, grey elsewhere
    numpy.testing.assert_array_equal(out[:, 2:7, 1:9], img)
    assert (out[:, :2] == 0.5).all() and (out[:, 7:] == 0.5).all()
    assert (out[:, :, :1] == 0.5).all() and (out[:, :, 9:] == 0.5).all()
