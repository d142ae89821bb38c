"""Tests of AnchorTargetCreator and ProposalTargetCreator: counts, thresholds, ignores."""

import numpy
import pytest

from cvzoo.models.detection import box_coding
from cvzoo.models.detection.faster_rcnn import anchor_target_creator, proposal_target_creator


def _grid_anchors(step=8, side=16, size=64):
    corner = numpy.stack(numpy.meshgrid(numpy.arange(-8, size, step),
                                        numpy.arange(-8, size, step)), -1).reshape(-1, 2)
    return numpy.concatenate((corner, corner + side), 1).astype(numpy.float32)


def test_anchor_labels_hand_case():
    anchor = numpy.array([[0, 0, 10, 10], [1, 0, 11, 10], [30, 30, 40, 40], [-5, 0, 5, 10],
                          [0, 0, 10, 12], [20, 0, 30, 10]], numpy.float32)
    bbox = numpy.array([[0, 0, 10, 10], [31, 31, 39, 41]], numpy.float32)
    creator = anchor_target_creator.AnchorTargetCreator(n_sample=100)
    loc, label = creator(bbox, anchor, (50, 50))
    # IoU: a1 0.818 (fg), a2 best of box 1 (0.64 < 0.7, fg anyway), a3 outside (ignored),
    # a4 0.833 (fg), a5 0 (bg)
    numpy.testing.assert_array_equal(label, [1, 1, 1, -1, 1, 0])
    numpy.testing.assert_allclose(loc[3], 0)
    numpy.testing.assert_allclose(loc[1], box_coding.encode(anchor[1:2], bbox[:1], eps=box_coding.DTYPE_EPS)[0],
                                  rtol=1e-6)


def test_anchor_between_thresholds_is_ignored():
    anchor = numpy.array([[0, 0, 10, 10], [0, 0, 20, 10]], numpy.float32)
    bbox = numpy.array([[0, 0, 10, 10]], numpy.float32)
    _, label = anchor_target_creator.AnchorTargetCreator()(bbox, anchor, (40, 40))
    numpy.testing.assert_array_equal(label, [1, -1])  # IoU 0.5: neither fg nor bg


@pytest.mark.parametrize('n_sample, pos_ratio', [(32, 0.5), (10, 0.25)], ids=['32', '10'])
def test_anchor_sample_counts(n_sample, pos_ratio):
    numpy.random.seed(0)
    anchor = _grid_anchors()
    bbox = numpy.array([[0, 0, 30, 30], [30, 30, 60, 60]], numpy.float32)
    creator = anchor_target_creator.AnchorTargetCreator(n_sample, pos_ratio=pos_ratio)
    _, label = creator(bbox, anchor, (64, 64))
    n_fg, n_bg = int((label == 1).sum()), int((label == 0).sum())
    assert n_fg <= int(n_sample * pos_ratio) and n_fg > 0
    assert n_fg + n_bg == n_sample


def test_anchor_without_boxes_is_all_background():
    anchor = _grid_anchors()
    _, label = anchor_target_creator.AnchorTargetCreator(20)(
        numpy.zeros((0, 4), numpy.float32), anchor, (64, 64))
    assert (label == 0).sum() == 20 and (label == 1).sum() == 0


def test_proposal_targets_hand_case():
    roi = numpy.array([[0, 0, 10, 10], [0, 0, 10, 30], [40, 40, 50, 50], [0, 0, 10, 19]],
                      numpy.float32)
    bbox = numpy.array([[0, 0, 10, 20]], numpy.float32)
    label = numpy.array([4], numpy.int32)
    creator = proposal_target_creator.ProposalTargetCreator(n_sample=10, pos_ratio=0.5)
    sample_roi, gt_loc, gt_label = creator(roi, bbox, label)
    # fg (IoU >= 0.5): roi 0 (0.5), roi 1 (0.667), roi 3 (0.95) and the box itself;
    # bg: roi 2 (0)
    assert sorted(gt_label.tolist()) == [0, 5, 5, 5, 5]
    fg = gt_label > 0
    assert (gt_label[:int(fg.sum())] > 0).all()  # fg first
    expected = box_coding.encode(sample_roi[fg], numpy.repeat(bbox, fg.sum(), 0),
                                 eps=box_coding.DTYPE_EPS) / [
        0.1, 0.1, 0.2, 0.2]
    numpy.testing.assert_allclose(gt_loc[fg], expected, rtol=1e-5, atol=1e-6)


def test_proposal_target_counts():
    numpy.random.seed(1)
    rng = numpy.random.RandomState(0)
    corner = rng.uniform(0, 80, (300, 2))
    roi = numpy.concatenate((corner, corner + rng.uniform(5, 40, (300, 2))), 1)
    roi = roi.astype(numpy.float32)
    bbox = numpy.array([[10, 10, 40, 40], [50, 50, 90, 100]], numpy.float32)
    creator = proposal_target_creator.ProposalTargetCreator(n_sample=64, pos_ratio=0.25)
    sample_roi, _, gt_label = creator(roi, bbox, numpy.array([0, 1], numpy.int32))
    assert len(sample_roi) == 64 and (gt_label > 0).sum() <= 16
    assert set(gt_label.tolist()) <= {0, 1, 2}


def test_proposal_targets_need_a_box():
    with pytest.raises(ValueError, match='bbox'):
        proposal_target_creator.ProposalTargetCreator()(
            numpy.zeros((3, 4), numpy.float32), numpy.zeros((0, 4), numpy.float32),
            numpy.zeros(0, numpy.int32))
