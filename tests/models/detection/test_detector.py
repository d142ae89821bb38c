"""Detector.suppress(): thresholds, per-image per-class NMS, top-k and clipping by hand."""

import typing

import numpy
import pytest

from cvzoo.models.detection.detector import Detector


class _Fake(Detector):
    presets: typing.ClassVar[dict] = {'visualize': {'score_thresh': 0.5, 'nms_thresh': 0.5},
               'evaluate': {'score_thresh': 0.1, 'nms_thresh': 0.5}}


BBOX = numpy.array([
    [[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [-5, -5, 50, 45]],
    [[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 1, 1]],
], numpy.float32)
SCORE = numpy.array([
    [[0.9, 0.2], [0.8, 0.6], [0.3, 0.05], [0.05, 0.7]],
    [[0.05, 0.05], [0.95, 0.05], [0.05, 0.05], [0.4, 0.3]],
], numpy.float32)


def test_suppress_by_hand():
    detector = _Fake()
    detector.use_preset('evaluate')
    bboxes, labels, scores = detector.suppress(BBOX, SCORE, [(40, 40), (40, 40)])
    # image 0: class 0 keeps box 0 (0.9; box 1 overlaps it, IoU 0.68) and box 2 (0.3);
    # class 1 keeps box 3 (0.7, clipped), box 1 (0.6) and box 0 (0.2 overlaps box 1: dropped)
    numpy.testing.assert_allclose(scores[0], [0.9, 0.7, 0.6, 0.3])
    numpy.testing.assert_array_equal(labels[0], [0, 1, 1, 0])
    numpy.testing.assert_array_equal(bboxes[0][1], [0, 0, 40, 40])
    numpy.testing.assert_allclose(scores[1], [0.95, 0.4, 0.3])
    numpy.testing.assert_array_equal(labels[1], [0, 0, 1])
    assert labels[0].dtype == numpy.int32 and scores[0].dtype == numpy.float32


def test_top_k_per_image_and_threshold():
    detector = _Fake()
    detector.use_preset('evaluate')
    detector.max_detections = 2
    _, _, scores = detector.suppress(BBOX, SCORE, [(40, 40), (40, 40)])
    numpy.testing.assert_allclose(scores[0], [0.9, 0.7])
    numpy.testing.assert_allclose(scores[1], [0.95, 0.4])
    detector.max_detections = None
    detector.use_preset('visualize')
    _, _, scores = detector.suppress(BBOX, SCORE, [(40, 40), (40, 40)])
    numpy.testing.assert_allclose(scores[0], [0.9, 0.7, 0.6])
    numpy.testing.assert_allclose(scores[1], [0.95])


def test_unknown_preset():
    with pytest.raises(ValueError, match="preset: expected one of"):
        _Fake().use_preset('fast')
