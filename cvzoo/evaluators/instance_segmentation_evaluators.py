"""Instance segmentation evaluators: VOC (mask AP at IoU thresholds) and COCO (mask AP/AR).

Both keep each batch's predicted and ground-truth masks as runs of pixels
(:class:`RunLengthMasks`) rather than dense arrays, so that a whole validation set (COCO
val2017: about 500,000 predicted masks) fits in memory; the metrics read the runs.
"""

import numbers

from cvzoo.evaluators import detection_evaluators, evaluator
from cvzoo.evaluators.metrics import (eval_instance_segmentation_coco,
                                      eval_instance_segmentation_voc)
from cvzoo.evaluators.metrics.run_length_masks import RunLengthMasks


def _encode_masks(result, examples):
    """Replace the masks of predict()'s first field and of each example's second."""
    masks = [RunLengthMasks.from_masks(mask) for mask in result[0]]
    examples = [example[:1] + (RunLengthMasks.from_masks(example[1]),) + example[2:]
                for example in examples]
    return (masks,) + tuple(result[1:]), examples


class InstanceSegmentationVOCEvaluator(evaluator.Evaluator):
    """Evaluate ``masks, labels, scores = target.predict(imgs)`` with the VOC metric.

    Examples are ``img, mask, label``. Report keys, for one ``iou_thresh``: ``'map'``
    and ``'ap/<label name>'`` (as ChainerCV's evaluator); for several:
    ``'map/iou=0.50'``, ``'ap/iou=0.50/<label name>'`` and so on per threshold.

    Args: as :class:`Evaluator`, plus
        iou_thresh (float or sequence of float): the mask IoU of a true positive
            (ChainerCV's FCIS evaluation on SBD reports 0.5 and 0.7).
        use_07_metric (bool): the VOC2007 11-point AP (True) or the area (False).
    """

    name = 'instance_segmentation_voc'

    def __init__(self, iterator_or_dataset, target, iou_thresh=0.5, use_07_metric=False,
                 label_names=None, batchsize=8, **kwargs):
        super().__init__(iterator_or_dataset, target, label_names, batchsize, **kwargs)
        single = isinstance(iou_thresh, numbers.Real)
        threshs = (iou_thresh,) if single else tuple(iou_thresh)
        if not threshs or not all(0 <= t <= 1 for t in threshs):
            raise ValueError(f'iou_thresh: expected values in [0, 1], got {iou_thresh}')
        self.iou_thresh = iou_thresh
        self._threshs = {('' if single else f'/iou={t:.2f}'): t for t in threshs}
        self.use_07_metric = use_07_metric

    def encode_batch(self, result, examples):
        """Keep the masks as RunLengthMasks."""
        return _encode_masks(result, examples)

    def evaluate_outputs(self, outputs, truths):
        report = {}
        for suffix, thresh in self._threshs.items():
            result = eval_instance_segmentation_voc.eval_instance_segmentation_voc(
                *outputs, truths[0], truths[1], iou_thresh=thresh,
                use_07_metric=self.use_07_metric)
            report.update(detection_evaluators.voc_report(self, result, suffix))
        return report


class InstanceSegmentationCOCOEvaluator(evaluator.Evaluator):
    """Evaluate ``masks, labels, scores = target.predict(imgs)`` with the COCO protocol.

    Examples are ``img, mask, label`` optionally followed by ``crowded`` and ``area``
    (``with_crowded`` / ``with_area`` say which come, as for
    :class:`DetectionCOCOEvaluator`; without ``area`` the mask areas set the
    small/medium/large ranges).

    Report keys: the twelve ``'map/...'``/``'mar/...'`` summaries of
    eval_instance_segmentation_coco and
    ``'ap/iou=0.50:0.95/area=all/max_dets=100/<label name>'`` per class.
    """

    name = 'instance_segmentation_coco'

    def __init__(self, iterator_or_dataset, target, label_names=None, batchsize=8,
                 with_crowded=False, with_area=False, **kwargs):
        super().__init__(iterator_or_dataset, target, label_names, batchsize, **kwargs)
        self.with_crowded = with_crowded
        self.with_area = with_area

    def encode_batch(self, result, examples):
        """Keep the masks as RunLengthMasks."""
        return _encode_masks(result, examples)

    def evaluate_outputs(self, outputs, truths):
        crowded, area = detection_evaluators.coco_truth_extras(
            truths, self.with_crowded, self.with_area)
        result = eval_instance_segmentation_coco.eval_instance_segmentation_coco(
            *outputs, truths[0], truths[1], area, crowded)
        return detection_evaluators.coco_report(self, result)
