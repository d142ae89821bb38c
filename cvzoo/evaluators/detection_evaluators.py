"""Detection evaluators: VOC (mAP at IoU 0.5) and COCO (mAP at IoU .50:.95 and more)."""

from cvzoo.evaluators import evaluator
from cvzoo.evaluators.metrics import eval_detection_coco, eval_detection_voc

COCO_PER_CLASS_KEY = 'ap/iou=0.50:0.95/area=all/max_dets=100'


def coco_truth_extras(truths, with_crowded, with_area):
    """``(crowded, area)`` lists (None when absent) of the truths after ``bbox, label``
    (or ``mask, label``), in the order COCO datasets return them: crowded, then area."""
    extra = list(truths[2:])
    crowded = extra.pop(0) if with_crowded else None
    area = extra.pop(0) if with_area else None
    return crowded, area


def coco_report(owner, result, per_class_key=COCO_PER_CLASS_KEY):
    """The report of a COCO metric's result: the summaries and per-class AP (the
    ``per_class_key`` entry of the result, whose caps differ for keypoints)."""
    report = {k: v for k, v in result.items() if k.startswith(('map/', 'mar/'))}
    report.update(owner.per_class(per_class_key, result[per_class_key]))
    return report


def voc_report(owner, result, suffix=''):
    """The report of a VOC metric's result: ``'map<suffix>'`` and per-class
    ``'ap<suffix>/<label name>'``."""
    report = {f'map{suffix}': result['map']}
    report.update(owner.per_class(f'ap{suffix}', result['ap']))
    return report


class DetectionVOCEvaluator(evaluator.Evaluator):
    """Evaluate ``bboxes, labels, scores = target.predict(imgs)`` with the VOC metric.

    Examples are ``img, bbox, label`` or ``img, bbox, label, difficult``.

    Report keys: ``'map'`` (float) and ``'ap/<label name>'`` per class (nan for a class
    absent from both); with ``prefix='main/'`` they read like ChainerCV's.

    Args: as :class:`Evaluator`, plus ``use_07_metric`` (bool).
    """

    name = 'detection_voc'

    def __init__(self, iterator_or_dataset, target, use_07_metric=False, label_names=None,
                 batchsize=8, **kwargs):
        super().__init__(iterator_or_dataset, target, label_names, batchsize, **kwargs)
        self.use_07_metric = use_07_metric

    def evaluate_outputs(self, outputs, truths):
        pred_bboxes, pred_labels, pred_scores = outputs
        gt_difficults = truths[2] if len(truths) > 2 else None
        result = eval_detection_voc.eval_detection_voc(
            pred_bboxes, pred_labels, pred_scores, truths[0], truths[1], gt_difficults,
            use_07_metric=self.use_07_metric)
        return voc_report(self, result)


class DetectionCOCOEvaluator(evaluator.Evaluator):
    """Evaluate detections with the COCO protocol (:func:`eval_detection_coco`).

    Examples are ``img, bbox, label`` optionally followed by ``area`` and ``crowded``
    (set ``with_area`` / ``with_crowded`` to say which come, in the dataset's order:
    COCOBboxDataset returns crowded before area).

    Report keys: the twelve ``'map/...'``/``'mar/...'`` summaries of eval_detection_coco
    and ``'ap/iou=0.50:0.95/area=all/max_dets=100/<label name>'`` per class.
    """

    name = 'detection_coco'

    def __init__(self, iterator_or_dataset, target, label_names=None, batchsize=8,
                 with_crowded=False, with_area=False, **kwargs):
        super().__init__(iterator_or_dataset, target, label_names, batchsize, **kwargs)
        self.with_crowded = with_crowded
        self.with_area = with_area

    def evaluate_outputs(self, outputs, truths):
        crowded, area = coco_truth_extras(truths, self.with_crowded, self.with_area)
        result = eval_detection_coco.eval_detection_coco(*outputs, truths[0], truths[1],
                                                         area, crowded)
        return coco_report(self, result)
