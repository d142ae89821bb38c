"""box_coding: hand values, weights, round trips, the eps floor and the exp clip, and the
y/x channel swap of ChainerCV heads."""

import math

import numpy
import pytest

from cvzoo.models.detection import box_coding


def test_decode_hand_values():
    src = numpy.array([[0, 0, 10, 20], [10, 10, 14, 12]], numpy.float32)
    loc = numpy.array([[0.1, -0.5, 0, 0], [0, 0, numpy.log(2), numpy.log(0.5)]], numpy.float32)
    # box 0: centre (5 + 1, 10 - 10), same size; box 1: centre (12, 11), size (8, 1)
    expected = numpy.array([[1, -10, 11, 10], [8, 10.5, 16, 11.5]], numpy.float32)
    out = box_coding.decode(src, loc)
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize('eps', [None, box_coding.DTYPE_EPS])
def test_encode_hand_values_and_x_first(eps):
    anchor = numpy.array([[10, 20, 30, 60]], numpy.float32)  # centre (20, 40), size (20, 40)
    bbox = numpy.array([[15, 10, 55, 50]], numpy.float32)    # centre (35, 30), size (40, 40)
    loc = box_coding.encode(anchor, bbox, eps=eps)
    assert loc.dtype == numpy.float32
    numpy.testing.assert_allclose(loc, [[15 / 20, -10 / 40, math.log(2), 0]], rtol=1e-6)


def test_weights_scale_the_offsets():
    anchor = numpy.array([[0, 0, 10, 10]], numpy.float64)
    bbox = numpy.array([[5, 0, 15, 20]], numpy.float64)
    loc = box_coding.encode(anchor, bbox, (10, 10, 5, 5))
    numpy.testing.assert_allclose(loc, [[5, 5, 0, 5 * math.log(2)]])
    numpy.testing.assert_allclose(box_coding.decode(anchor, loc, (10, 10, 5, 5)), bbox)


@pytest.mark.parametrize('dtype', [numpy.float32, numpy.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('eps', [None, box_coding.DTYPE_EPS])
def test_round_trip(rng, dtype, eps):
    xy = rng.uniform(0, 100, (50, 2))
    anchor = numpy.concatenate((xy, xy + rng.uniform(1, 50, (50, 2))), 1).astype(dtype)
    xy = rng.uniform(0, 100, (50, 2))
    bbox = numpy.concatenate((xy, xy + rng.uniform(1, 50, (50, 2))), 1).astype(dtype)
    decoded = box_coding.decode(anchor, box_coding.encode(anchor, bbox, eps=eps))
    assert decoded.dtype == dtype
    numpy.testing.assert_allclose(decoded, bbox, rtol=1e-4 if dtype == numpy.float32 else 1e-10)


def test_eps_floors_degenerate_boxes_only_when_asked():
    src = numpy.array([[0, 0, 0, 10]], numpy.float32)  # zero width
    dst = numpy.array([[0, 0, 0, 10]], numpy.float32)
    with numpy.errstate(divide='ignore', invalid='ignore'):
        assert not numpy.isfinite(box_coding.encode(src, dst)).all()
    assert numpy.isfinite(box_coding.encode(src, dst, eps=box_coding.DTYPE_EPS)).all()
    with pytest.raises(ValueError, match='eps'):
        box_coding.encode(src, dst, eps=1e-6)


@pytest.mark.parametrize('clip', [None, box_coding.EXP_CLIP], ids=['no_clip', 'clip'])
def test_exp_clip(clip):
    src = numpy.array([[0, 0, 16, 16]], numpy.float32)
    loc = numpy.array([[0, 0, 10, 0]], numpy.float32)
    bbox = box_coding.decode(src, loc, exp_clip=clip)
    # clipped: exp(log(1000 / 16)) * 16 = 1000 wide, centred on 8
    expected = 16 * numpy.exp(10.0) if clip is None else 1000
    assert bbox[0, 2] - bbox[0, 0] == pytest.approx(expected, rel=1e-5)


def test_decode_broadcasts_per_class_and_per_anchor():
    src = numpy.array([[0, 0, 10, 10]], numpy.float32)
    out = box_coding.decode(src[:, None], numpy.zeros((1, 3, 4), numpy.float32))
    assert out.shape == (1, 3, 4)
    numpy.testing.assert_allclose(out[0], numpy.repeat(src, 3, axis=0))
    assert box_coding.decode(src, numpy.zeros((3, 1, 4), numpy.float32)).shape == (3, 1, 4)


def test_swap_xy_channels_is_its_own_inverse():
    W = numpy.arange(8 * 3, dtype=numpy.float32).reshape(8, 3)
    swapped = box_coding.swap_xy_channels(W)
    numpy.testing.assert_array_equal(swapped[:4], W[[1, 0, 3, 2]])
    numpy.testing.assert_array_equal(box_coding.swap_xy_channels(swapped), W)
    b = numpy.arange(14)  # two groups of 7 entries (YOLO: 4 offsets, objectness, 2 classes)
    numpy.testing.assert_array_equal(box_coding.swap_xy_channels(b, 7),
                                     [1, 0, 3, 2, 4, 5, 6, 8, 7, 10, 9, 11, 12, 13])
