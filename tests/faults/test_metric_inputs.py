"""Bad inputs to the metrics: each is a ValueError (or TypeError) naming the argument,
raised before any large allocation."""

import numpy
import pytest

from cvzoo.evaluators.metrics import _inputs
from cvzoo.evaluators.metrics.eval_classification import eval_classification
from cvzoo.evaluators.metrics.eval_detection_coco import eval_detection_coco
from cvzoo.evaluators.metrics.eval_detection_voc import eval_detection_voc
from cvzoo.evaluators.metrics.eval_instance_segmentation_coco import (
    eval_instance_segmentation_coco)
from cvzoo.evaluators.metrics.eval_instance_segmentation_voc import eval_instance_segmentation_voc
from cvzoo.evaluators.metrics.eval_keypoint_detection_coco import eval_keypoint_detection_coco
from cvzoo.evaluators.metrics.eval_semantic_segmentation import eval_semantic_segmentation
from tests.helpers import memory_cap

BOX = numpy.array([[0, 0, 10, 10]], numpy.float32)
LABEL = numpy.array([0], numpy.int32)
SCORE = numpy.array([0.9], numpy.float32)
GOOD = {'pred_bboxes': [BOX], 'pred_labels': [LABEL], 'pred_scores': [SCORE],
        'gt_bboxes': [BOX], 'gt_labels': [LABEL]}


def _detection(metric, **changes):
    def call():
        return metric(**dict(GOOD, **changes))
    return call


DETECTION = {
    'boxes_of_five_columns': ({'pred_bboxes': [numpy.zeros((1, 5), numpy.float32)]},
                              'pred_bboxes'),
    'boxes_1d': ({'gt_bboxes': [numpy.zeros(4, numpy.float32)]}, 'gt_bboxes'),
    'nan_box': ({'pred_bboxes': [numpy.full((1, 4), numpy.nan, numpy.float32)]},
                'pred_bboxes'),
    'inf_gt_box': ({'gt_bboxes': [numpy.array([[0, 0, numpy.inf, 10]], numpy.float32)]},
                   'gt_bboxes'),
    'negative_label': ({'pred_labels': [numpy.array([-1])]}, 'pred_labels'),
    'negative_gt_label': ({'gt_labels': [numpy.array([-3])]}, 'gt_labels'),
    'fewer_scores_than_boxes': ({'pred_scores': [numpy.zeros(0, numpy.float32)]},
                                'pred_scores'),
    'labels_2d': ({'gt_labels': [numpy.zeros((1, 1), numpy.int32)]}, 'gt_labels'),
    'one_list_shorter': ({'gt_labels': []}, 'gt_labels'),
    'one_list_longer': ({'pred_scores': [SCORE, SCORE]}, 'pred_scores'),
    'string_boxes': ({'pred_bboxes': [numpy.array([['a', 'b', 'c', 'd']])]}, 'pred_bboxes'),
}
CASES = {f'{metric.__name__}-{case}': (metric, changes, named)
         for metric in (eval_detection_voc, eval_detection_coco)
         for case, (changes, named) in DETECTION.items()}


@pytest.mark.parametrize('case', list(CASES), ids=list(CASES))
def test_bad_detection_input_names_the_argument(case):
    metric, changes, named = CASES[case]
    with pytest.raises((ValueError, TypeError)) as info:
        _detection(metric, **changes)()
    assert named in str(info.value)


def test_empty_lists_give_nan_not_an_error():
    assert numpy.isnan(eval_detection_voc([], [], [], [], [])['map'])
    result = eval_detection_coco([], [], [], [], [])
    assert numpy.isnan(result['map/iou=0.50:0.95/area=all/max_dets=100'])


def test_nan_class_scores_are_never_a_hit():
    scores = numpy.array([[numpy.nan] * 3, [0.1, numpy.nan, 0.2]])
    result = eval_classification(scores, numpy.array([0, 2]), top_k=(1, 3))
    assert result == {'top1': 0.5, 'top3': 0.5}


OTHER = {
    'classification_scores_1d': (lambda: eval_classification(numpy.zeros(3), numpy.zeros(3)),
                                 'pred_scores'),
    'classification_label_too_large': (
        lambda: eval_classification(numpy.zeros((2, 3)), numpy.array([0, 3])), 'gt_labels'),
    'classification_lengths_differ': (
        lambda: eval_classification(numpy.zeros((2, 3)), numpy.array([0])), 'gt_labels'),
    'classification_top_k_zero': (
        lambda: eval_classification(numpy.zeros((2, 3)), numpy.array([0, 1]), top_k=(0,)),
        'top_k'),
    'classification_label_below_minus_one': (
        lambda: eval_classification(numpy.zeros((2, 3)), numpy.array([0, -5])), 'gt_labels'),
    'segmentation_huge_label': (
        lambda: eval_semantic_segmentation([numpy.zeros((2, 2), int)],
                                           [numpy.full((2, 2), 100_000)]), 'gt_labels'),
    'segmentation_negative_prediction': (
        lambda: eval_semantic_segmentation([numpy.full((2, 2), -2)], [numpy.zeros((2, 2), int)]),
        'pred_labels'),
    'segmentation_shapes_differ': (
        lambda: eval_semantic_segmentation([numpy.zeros((2, 2), int)],
                                           [numpy.zeros((2, 3), int)]), 'pred_labels'),
    'segmentation_fewer_truths': (
        lambda: eval_semantic_segmentation([numpy.zeros((2, 2), int)] * 2,
                                           [numpy.zeros((2, 2), int)]), 'gt_labels'),
    'segmentation_float_labels': (
        lambda: eval_semantic_segmentation([numpy.full((2, 2), 0.5)],
                                           [numpy.zeros((2, 2), int)]), 'pred_labels'),
    'voc_iou_thresh_above_one': (lambda: eval_detection_voc(**GOOD, iou_thresh=1.5),
                                 'iou_thresh'),
}


@pytest.mark.parametrize('case', list(OTHER), ids=list(OTHER))
def test_bad_metric_input_names_the_argument(case):
    call, named = OTHER[case]
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert named in str(info.value)


MASK = numpy.ones((1, 4, 4), bool)
POINTS = numpy.ones((1, 17, 2), numpy.float32)


def _huge_labels(metric, argument, label):
    """``metric`` on one matching prediction and truth, ``argument`` holding ``label``."""
    labels = {'pred_labels': [LABEL], 'gt_labels': [LABEL]}
    labels[argument] = [numpy.array([label])]
    calls = {
        'eval_detection_voc': lambda: eval_detection_voc(**dict(GOOD, **labels)),
        'eval_detection_coco': lambda: eval_detection_coco(**dict(GOOD, **labels)),
        'eval_instance_segmentation_voc': lambda: eval_instance_segmentation_voc(
            [MASK], labels['pred_labels'], [SCORE], [MASK], labels['gt_labels']),
        'eval_instance_segmentation_coco': lambda: eval_instance_segmentation_coco(
            [MASK], labels['pred_labels'], [SCORE], [MASK], labels['gt_labels']),
        'eval_keypoint_detection_coco': lambda: eval_keypoint_detection_coco(
            [POINTS], labels['pred_labels'], [SCORE], [POINTS],
            [numpy.ones((1, 17), bool)], labels['gt_labels'], [BOX]),
    }
    return calls[metric]


HUGE_LABELS = {f'{metric}-{argument}-{label}': (metric, argument, label)
               for metric in ('eval_detection_voc', 'eval_detection_coco',
                              'eval_instance_segmentation_voc',
                              'eval_instance_segmentation_coco',
                              'eval_keypoint_detection_coco')
               for argument in ('pred_labels', 'gt_labels')
               for label in (10 ** 9, 2 ** 62)}


@pytest.mark.parametrize('case', list(HUGE_LABELS), ids=list(HUGE_LABELS))
def test_a_huge_label_is_refused_before_the_per_class_arrays(case):
    """A label sizes the per-class arrays ('ap' has max label + 1 entries): one of 1e9
    once allocated 22 GB. Run under an address-space cap, so that a metric that still
    allocates fails with MemoryError instead of exhausting the machine."""
    metric, argument, label = HUGE_LABELS[case]
    call = _huge_labels(metric, argument, label)
    with memory_cap.address_space_cap(), pytest.raises(ValueError) as info:
        call()
    assert argument in str(info.value) and str(label) in str(info.value)


def test_the_largest_label_allowed_still_evaluates():
    label = [numpy.array([_inputs.MAX_LABEL])]
    result = eval_detection_voc(**dict(GOOD, pred_labels=label, gt_labels=label))
    assert len(result['ap']) == _inputs.MAX_LABEL + 1 and result['map'] == 1.0
