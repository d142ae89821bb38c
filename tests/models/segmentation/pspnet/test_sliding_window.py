"""Tests of PSPNet's sliding-window, canvas and flip inference on toy networks."""

import math

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.segmentation.pspnet import sliding_window

CPU = backend.get_device('cpu')


def _reference_windows(size, window, stride):
    """ChainerCV's convolution_crop layout, written out per window (loops allowed)."""
    counts = [math.ceil((n - w) / s) + 1 for n, w, s in zip(size, window, stride)]
    starts = [-(w + s * (c - 1) - n) // 2 for n, w, s, c in zip(size, window, stride, counts)]
    windows = []
    for i in range(counts[0]):
        for j in range(counts[1]):
            low = (starts[0] + i * stride[0], starts[1] + j * stride[1])
            high = (low[0] + window[0], low[1] + window[1])
            image = tuple(slice(max(lo, 0), min(hi, n)) for lo, hi, n in zip(low, high, size))
            crop = tuple(slice(-min(lo, 0), w - max(hi - n, 0))
                         for lo, hi, n, w in zip(low, high, size, window))
            windows.append((image, crop))
    return windows


def test_windows_of_a_480x360_image_at_ade20k_size():
    # NOTE: hand-computed: one row of windows starting at y = -57, two columns at
    # x = -155 and x = 161 (stride ceil(473 * 2 / 3) = 316).
    windows = sliding_window.window_slices((360, 480), (473, 473), (316, 316))
    assert windows == [
        ((slice(0, 360), slice(0, 318)), (slice(57, 417), slice(155, 473))),
        ((slice(0, 360), slice(161, 480)), (slice(57, 417), slice(0, 319))),
    ]


CASES = {'both_sides_larger': ((1024, 2048), (713, 713)), 'one_side': ((90, 200), (64, 64)),
         'exact_fit': ((64, 128), (64, 64)), 'odd': ((101, 77), (48, 40))}


@pytest.mark.parametrize('size, window', list(CASES.values()), ids=list(CASES))
def test_windows_match_the_reference_and_cover_every_pixel(size, window):
    stride = tuple(math.ceil(w * 2 / 3) for w in window)
    windows = sliding_window.window_slices(size, window, stride)
    assert windows == _reference_windows(size, window, stride)
    covered = numpy.zeros(size, int)
    for image, crop in windows:
        assert [s.stop - s.start for s in image] == [s.stop - s.start for s in crop]
        covered[image] += 1
    assert covered.min() >= 1


def _toy_predict(W):
    """A position-independent network: a 1x1 convolution and a softmax over channels."""
    def predict(x):
        score = numpy.einsum('oc,nchw->nohw', W, x)
        e = numpy.exp(score - score.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(numpy.float32)
    return predict


@pytest.mark.parametrize('flip', [False, True], ids=['plain', 'flip'])
@pytest.mark.parametrize('size', [(90, 200), (101, 77), (200, 50)], ids=['wide', 'odd', 'tall'])
def test_tiled_scores_equal_a_full_image_forward_for_a_1x1_network(size, flip, rng):
    predict = _toy_predict(rng.standard_normal((4, 3)).astype(numpy.float32))
    img = rng.standard_normal((3,) + size).astype(numpy.float32)
    tiled = sliding_window.tile_scores(predict, img, (64, 64), CPU, flip=flip, batchsize=2)
    numpy.testing.assert_allclose(tiled, predict(img[None])[0], rtol=1e-5, atol=1e-6)


def test_contain_places_a_small_image_at_the_centre_of_a_zero_canvas(rng):
    img = rng.standard_normal((3, 21, 30)).astype(numpy.float32)
    seen = []

    def identity(x):
        seen.append(x.copy())
        return x

    out = sliding_window.contain_scores(identity, img, (64, 64), CPU, flip=False)
    numpy.testing.assert_allclose(out, img, rtol=1e-5, atol=1e-5)
    canvas = seen[0][0]
    # NOTE: offsets floor((64 - 21) / 2) = 21 and floor((64 - 30) / 2) = 17.
    numpy.testing.assert_array_equal(canvas[:, 21:42, 17:47], img)
    assert numpy.abs(canvas).sum() == pytest.approx(numpy.abs(img).sum(), rel=1e-5)


def test_contain_shrinks_an_image_larger_than_the_window_on_one_side(rng):
    img = rng.standard_normal((3, 50, 128)).astype(numpy.float32)
    shapes = []

    def constant(x):
        shapes.append(x.shape)
        return numpy.ones((len(x), 2) + x.shape[2:], numpy.float32)

    out = sliding_window.contain_scores(constant, img, (64, 64), CPU, flip=True)
    assert shapes == [(2, 3, 64, 64)] and out.shape == (2, 50, 128)
    numpy.testing.assert_allclose(out, 1, rtol=1e-6)


def test_flip_averages_with_the_mirrored_prediction(rng):
    # NOTE: the toy looks one column to the right, so it is not mirror-symmetric.
    def shifted(x):
        return numpy.roll(x, -1, axis=3) + numpy.arange(x.shape[3], dtype=numpy.float32)

    x = rng.standard_normal((3, 2, 5, 7)).astype(numpy.float32)
    out = sliding_window.predict_with_flip(shifted, x, CPU, flip=True, batchsize=2)
    mirrored = shifted(numpy.ascontiguousarray(x[:, :, :, ::-1]))[:, :, :, ::-1]
    numpy.testing.assert_allclose(out, (shifted(x) + mirrored) / 2, rtol=1e-6)
    plain = sliding_window.predict_with_flip(shifted, x, CPU, flip=False, batchsize=2)
    numpy.testing.assert_allclose(plain, shifted(x), rtol=1e-6)
    assert not numpy.allclose(out, plain)
