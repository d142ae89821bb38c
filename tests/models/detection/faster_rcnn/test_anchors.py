"""Tests of the RPN anchors against hand-computed values."""

import numpy

from cvzoo.models.detection.faster_rcnn import anchors


def test_anchor_base_hand_values():
    base = anchors.generate_anchor_base(16, (0.5, 1, 2), (8,))
    # ratio = height / width; area (16 * 8)^2; centred on (8, 8)
    h = 128 * numpy.sqrt([0.5, 1, 2])
    w = 128 / numpy.sqrt([0.5, 1, 2])
    expected = numpy.stack((8 - w / 2, 8 - h / 2, 8 + w / 2, 8 + h / 2), axis=1)
    numpy.testing.assert_allclose(base, expected, rtol=1e-6)
    assert base.dtype == numpy.float32


def test_anchor_base_order_is_ratio_major():
    base = anchors.generate_anchor_base(16, (0.5, 2), (1, 2))
    sides = base[:, 2:] - base[:, :2]
    # (ratio 0.5, scale 1), (0.5, 2), (2, 1), (2, 2)
    numpy.testing.assert_allclose(sides[:, 0], 16 * numpy.array([1, 2, 1, 2]) / numpy.sqrt(
        [0.5, 0.5, 2, 2]), rtol=1e-6)


def test_shifted_anchors_follow_the_cells_row_major():
    base = numpy.array([[0, 0, 4, 4], [1, 1, 2, 2]], numpy.float32)
    anchor = anchors.enumerate_shifted_anchor(base, 16, 2, 3)
    assert anchor.shape == (12, 4)
    # cell (y=1, x=2) is the 6th cell; its 2nd anchor is index 11
    numpy.testing.assert_array_equal(anchor[11], [33, 17, 34, 18])
    numpy.testing.assert_array_equal(anchor[2], [16, 0, 20, 4])


def test_fpn_level_anchors_hand_values():
    anchor = anchors.fpn_level_anchors(numpy, (2, 2), 1 / 8, 64, (0.5, 1, 2))
    assert anchor.shape == (12, 4)
    # scale 1/8: w factor round(8 / sqrt(r)) = 11, 8, 6; h factor round(w * r) = 6, 8, 12,
    # times 64 / 8 pixels; cell (0, 1) centre (12, 4)
    sides = numpy.array([[88, 48], [64, 64], [48, 96]], numpy.float32)
    expected = numpy.concatenate(([12, 4] - sides / 2, [12, 4] + sides / 2), axis=1)
    numpy.testing.assert_allclose(anchor[3:6], expected)
