"""Tests of the x-first box coding against hand-computed values."""

import numpy
import pytest

from cvzoo.models.detection.faster_rcnn import bbox_coder


def test_loc2bbox_hand_values():
    src = numpy.array([[0, 0, 10, 20], [10, 10, 14, 12]], numpy.float32)
    loc = numpy.array([[0.1, -0.5, 0, 0], [0, 0, numpy.log(2), numpy.log(0.5)]], numpy.float32)
    # box 0: centre (5 + 1, 10 - 10), same size; box 1: centre (12, 11), size (8, 1)
    expected = numpy.array([[1, -10, 11, 10], [8, 10.5, 16, 11.5]], numpy.float32)
    out = bbox_coder.loc2bbox(src, loc)
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-5)


def test_bbox2loc_hand_values_and_x_first():
    src = numpy.array([[0, 0, 10, 20]], numpy.float64)
    dst = numpy.array([[2, 0, 22, 20]], numpy.float64)  # shifted by 7 in x, twice as wide
    numpy.testing.assert_allclose(bbox_coder.bbox2loc(src, dst), [[0.7, 0, numpy.log(2), 0]])


def test_round_trip():
    rng = numpy.random.RandomState(0)
    corner = rng.uniform(0, 50, (20, 2))
    src = numpy.concatenate((corner, corner + rng.uniform(1, 30, (20, 2))), axis=1)
    corner = rng.uniform(0, 50, (20, 2))
    dst = numpy.concatenate((corner, corner + rng.uniform(1, 30, (20, 2))), axis=1)
    numpy.testing.assert_allclose(bbox_coder.loc2bbox(src, bbox_coder.bbox2loc(src, dst)), dst,
                                  rtol=1e-10, atol=1e-9)


def test_loc2bbox_broadcasts_per_class():
    src = numpy.array([[0, 0, 10, 10]], numpy.float32)
    loc = numpy.zeros((1, 3, 4), numpy.float32)
    out = bbox_coder.loc2bbox(src[:, None], loc)
    assert out.shape == (1, 3, 4)
    numpy.testing.assert_allclose(out[0], numpy.repeat(src, 3, axis=0))


@pytest.mark.parametrize('clip', [None, bbox_coder.EXP_CLIP], ids=['no_clip', 'clip'])
def test_exp_clip(clip):
    src = numpy.array([[0, 0, 1, 1]], numpy.float32)
    loc = numpy.array([[0, 0, 10, 0]], numpy.float32)
    width = bbox_coder.loc2bbox(src, loc, clip)[0, 2] - bbox_coder.loc2bbox(src, loc, clip)[0, 0]
    expected = numpy.exp(10.0) if clip is None else 1000 / 16
    assert width == pytest.approx(expected, rel=1e-5)
