"""eval_instance_segmentation_voc: mask AP on hand-computed cases."""

import numpy
import pytest

from cvzoo.evaluators.metrics.eval_instance_segmentation_voc import (
    eval_instance_segmentation_voc)


def _masks(*boxes, size=(20, 20)):
    masks = numpy.zeros((len(boxes),) + size, bool)
    for mask, (x0, y0, x1, y1) in zip(masks, boxes):
        mask[y0:y1, x0:x1] = True
    return masks


def test_perfect_and_wrong():
    gt = [_masks((0, 0, 5, 5), (10, 10, 20, 20))]
    label = [numpy.array([0, 1])]
    result = eval_instance_segmentation_voc(gt, label, [numpy.array([0.5, 0.6])], gt, label)
    numpy.testing.assert_allclose(result['ap'], [1.0, 1.0])
    wrong = eval_instance_segmentation_voc(gt, [numpy.array([1, 0])], [numpy.array([.5, .6])],
                                           gt, label)
    numpy.testing.assert_allclose(wrong['ap'], [0.0, 0.0])


def test_area_ap_with_a_duplicate():
    gt = [_masks((0, 0, 10, 10), (10, 10, 20, 20))]
    pred = [_masks((0, 0, 10, 10), (0, 0, 10, 8), (10, 10, 20, 20))]  # tp, duplicate, tp
    result = eval_instance_segmentation_voc(pred, [numpy.zeros(3, int)],
                                            [numpy.array([0.9, 0.8, 0.7])], gt,
                                            [numpy.zeros(2, int)])
    assert result['map'] == pytest.approx(0.5 + 0.5 * 2 / 3)


def test_mask_size_mismatch_names_the_argument():
    with pytest.raises(ValueError, match='pred_masks'):
        eval_instance_segmentation_voc([_masks((0, 0, 1, 1), size=(5, 5))], [numpy.array([0])],
                                       [numpy.array([1.])], [_masks((0, 0, 1, 1))],
                                       [numpy.array([0])])
