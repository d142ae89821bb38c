"""torchvision's Matcher rules for RetinaNet's anchors."""

import numpy
import pytest

from cvzoo.models.detection import anchor_matching


def test_thresholds_and_the_best_box():
    anchor = numpy.array([[0, 0, 10, 10],      # IoU 0.9 with box 0
                          [0, 0, 10, 4],       # 0.44 with box 0: ignored
                          [0, 0, 10, 3],       # 0.3: background
                          [20, 20, 30, 30]],   # 1.0 with box 1
                         numpy.float32)
    bbox = numpy.array([[0, 0, 10, 9], [20, 20, 30, 30]], numpy.float32)
    match = anchor_matching.match_anchors(anchor, bbox, allow_low_quality_matches=False)
    numpy.testing.assert_array_equal(match, [0, -2, -1, 1])
    assert match.dtype == numpy.int32


def test_low_quality_matches_give_every_box_its_best_anchors():
    anchor = numpy.array([[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 4, 4], [50, 50, 60, 60]],
                         numpy.float32)
    bbox = numpy.array([[0, 0, 10, 30], [100, 100, 110, 110]], numpy.float32)  # IoU 1/3
    numpy.testing.assert_array_equal(
        anchor_matching.match_anchors(anchor, bbox, allow_low_quality_matches=False),
        [-1, -1, -1, -1])
    # both tied anchors take box 0; box 1 overlaps nothing and changes nothing
    numpy.testing.assert_array_equal(anchor_matching.match_anchors(anchor, bbox),
                                     [0, 0, -1, -1])


def test_no_box_is_all_background():
    anchor = numpy.zeros((5, 4), numpy.float32)
    match = anchor_matching.match_anchors(anchor, numpy.zeros((0, 4), numpy.float32))
    numpy.testing.assert_array_equal(match, [-1] * 5)


def test_thresholds_are_checked():
    with pytest.raises(ValueError, match='bg_thresh'):
        anchor_matching.match_anchors(numpy.zeros((1, 4)), numpy.zeros((1, 4)), 0.4, 0.5)
