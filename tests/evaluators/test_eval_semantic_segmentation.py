"""eval_semantic_segmentation and its streaming confusion matrix."""

import numpy
import pytest

from cvzoo.evaluators.metrics.eval_semantic_segmentation import (
    calc_semantic_segmentation_confusion, eval_semantic_segmentation)


def test_hand_computed():
    gt = [numpy.array([[0, 0, 1], [1, 2, -1]])]
    pred = [numpy.array([[0, 1, 1], [1, 2, 0]])]
    result = eval_semantic_segmentation(pred, gt)
    # class 0: tp 1, fn 1, fp 0 -> 1/2; class 1: tp 2, fp 1 -> 2/3; class 2: 1
    numpy.testing.assert_allclose(result['iou'], [0.5, 2 / 3, 1.0])
    assert result['miou'] == pytest.approx((0.5 + 2 / 3 + 1) / 3)
    assert result['pixel_accuracy'] == pytest.approx(4 / 5)
    numpy.testing.assert_allclose(result['class_accuracy'], [0.5, 1.0, 1.0])
    assert result['mean_class_accuracy'] == pytest.approx(2.5 / 3)


def test_streams_a_generator_and_grows_classes():
    def pairs(rng):
        for n_class in (2, 5, 3):
            yield rng.integers(-1, n_class, (4, 6))
    gts = list(pairs(numpy.random.default_rng(0)))
    preds = [numpy.where(g < 0, 0, g) for g in gts]
    confusion = calc_semantic_segmentation_confusion(iter(preds), iter(gts))
    assert confusion.shape == (5, 5)
    expected = numpy.zeros((5, 5), int)
    for gt_label, pred_label in zip(gts, preds):
        for g, p in zip(gt_label.ravel(), pred_label.ravel()):
            if g >= 0:
                expected[g, p] += 1
    numpy.testing.assert_array_equal(confusion, expected)
    assert eval_semantic_segmentation(preds, gts)['miou'] == 1.0


def test_absent_class_is_nan():
    result = eval_semantic_segmentation([numpy.zeros((2, 2), int)],
                                        [numpy.array([[0, 0], [2, 2]])])
    assert numpy.isnan(result['iou'][1]) and numpy.isnan(result['class_accuracy'][1])
    assert result['iou'][2] == 0.0


@pytest.mark.parametrize('pred, gt, match', [
    ([numpy.zeros((2, 3))], [numpy.zeros((3, 2))], 'pred_labels'),
    ([numpy.zeros((2, 2))], [numpy.zeros((2, 2)), numpy.zeros((2, 2))], 'pred_labels'),
    ([numpy.zeros((2, 2))] * 2, [numpy.zeros((2, 2))], 'gt_labels'),
    ([-numpy.ones((2, 2))], [numpy.zeros((2, 2))], 'pred_labels'),
    ([numpy.full((2, 2), 100000)], [numpy.zeros((2, 2))], r'pred_labels\[0\].*< 4096'),
    ([numpy.zeros((2, 2))], [numpy.full((2, 2), 100000)], r'gt_labels\[0\].*100000'),
], ids=['shape', 'fewer_preds', 'fewer_gts', 'negative_pred', 'huge_pred', 'huge_gt'])
def test_errors(pred, gt, match):
    with pytest.raises(ValueError, match=match):
        eval_semantic_segmentation(pred, gt)
