"""torchvision's box coder with weights (1, 1, 1, 1): hand values, round trip, clip."""

import math

import numpy
import pytest

from cvzoo.models.detection.retinanet import box_coder


def test_encode_by_hand():
    anchor = numpy.array([[10, 20, 30, 60]], numpy.float32)  # centre (20, 40), size (20, 40)
    bbox = numpy.array([[15, 10, 55, 50]], numpy.float32)    # centre (35, 30), size (40, 40)
    loc = box_coder.encode(anchor, bbox)
    assert loc.dtype == numpy.float32
    numpy.testing.assert_allclose(loc, [[15 / 20, -10 / 40, math.log(2), 0]], rtol=1e-6)


def test_weights_scale_the_offsets():
    anchor = numpy.array([[0, 0, 10, 10]], numpy.float64)
    bbox = numpy.array([[5, 0, 15, 20]], numpy.float64)
    loc = box_coder.encode(anchor, bbox, (10, 10, 5, 5))
    numpy.testing.assert_allclose(loc, [[5, 5, 0, 5 * math.log(2)]])
    numpy.testing.assert_allclose(box_coder.decode(anchor, loc, (10, 10, 5, 5)), bbox)


@pytest.mark.parametrize('dtype', [numpy.float32, numpy.float64], ids=['float32', 'float64'])
def test_round_trip(rng, dtype):
    xy = rng.uniform(0, 100, (50, 2))
    anchor = numpy.concatenate((xy, xy + rng.uniform(1, 50, (50, 2))), 1).astype(dtype)
    xy = rng.uniform(0, 100, (50, 2))
    bbox = numpy.concatenate((xy, xy + rng.uniform(1, 50, (50, 2))), 1).astype(dtype)
    decoded = box_coder.decode(anchor, box_coder.encode(anchor, bbox))
    assert decoded.dtype == dtype
    numpy.testing.assert_allclose(decoded, bbox, rtol=1e-4 if dtype == numpy.float32 else 1e-10)


def test_decode_clips_the_size_offsets():
    anchor = numpy.array([[0, 0, 16, 16]], numpy.float32)
    bbox = box_coder.decode(anchor, numpy.array([[0, 0, 100, 100]], numpy.float32))
    # exp(log(1000 / 16)) * 16 = 1000 wide, centred on 8
    numpy.testing.assert_allclose(bbox, [[-492, -492, 508, 508]], rtol=1e-5)


def test_decode_broadcasts_per_anchor_offsets():
    anchor = numpy.array([[0, 0, 10, 10]], numpy.float32)
    loc = numpy.zeros((3, 1, 4), numpy.float32)
    assert box_coder.decode(anchor, loc).shape == (3, 1, 4)
