"""Keypoint detection evaluator: COCO's keypoint AP/AR (OKS) over a model's predict()."""

from cvzoo.evaluators import detection_evaluators, evaluator
from cvzoo.evaluators.metrics import eval_keypoint_detection_coco

COCO_KEYPOINT_PER_CLASS_KEY = 'ap/iou=0.50:0.95/area=all/max_dets=20'


class KeypointDetectionCOCOEvaluator(evaluator.Evaluator):
    """Evaluate ``points, point_scores, labels, scores = target.predict(imgs)`` with the
    COCO keypoint protocol (:func:`eval_keypoint_detection_coco`).

    Examples are ``img, point, visible, label, bbox`` optionally followed by ``crowded``
    and ``area`` (``with_crowded`` / ``with_area`` say which come, in the order
    COCOKeypointDataset returns them; without ``area`` the box areas set the OKS scale
    and the medium/large ranges). The point scores are not used by the metric and are
    not kept.

    Report keys: the ten ``'map/...'``/``'mar/...'`` summaries of
    eval_keypoint_detection_coco (``max_dets=20``) and
    ``'ap/iou=0.50:0.95/area=all/max_dets=20/<label name>'`` per class.

    Args: as :class:`Evaluator`, plus ``with_crowded``, ``with_area`` (bool) and
        ``sigmas`` (the OKS sigmas of the K points; None: COCO's 17).

    >>> import numpy
    >>> from cvzoo.datasets import TupleDataset
    >>> class Fixed:
    ...     def predict(self, imgs):
    ...         point = numpy.array([[[10, 10], [20, 30]]], numpy.float32)
    ...         return ([point] * len(imgs), [numpy.ones((1, 2))] * len(imgs),
    ...                 [numpy.zeros(1, numpy.int32)] * len(imgs), [numpy.ones(1)] * len(imgs))
    >>> point = numpy.array([[[10, 10], [20, 30]]], numpy.float32)
    >>> dataset = TupleDataset([numpy.zeros((3, 40, 40))], [point], [numpy.ones((1, 2), bool)],
    ...                        [numpy.zeros(1, numpy.int32)], [numpy.array([[0, 0, 30, 40]])])
    >>> evaluator = KeypointDetectionCOCOEvaluator(dataset, Fixed(), sigmas=[0.1, 0.1],
    ...                                            quiet=True)
    >>> round(evaluator.evaluate()['map/iou=0.50:0.95/area=all/max_dets=20'], 4)
    1.0
    """

    name = 'keypoint_detection_coco'

    def __init__(self, iterator_or_dataset, target, label_names=None, batchsize=8,
                 with_crowded=False, with_area=False, sigmas=None, **kwargs):
        super().__init__(iterator_or_dataset, target, label_names, batchsize, **kwargs)
        self.with_crowded = with_crowded
        self.with_area = with_area
        self.sigmas = sigmas

    def encode_batch(self, result, examples):
        """Keep points, labels and scores of predict()'s four fields."""
        if len(result) != 4:
            raise ValueError(f'target: expected predict() to return points, point_scores, '
                             f'labels, scores, got {len(result)} fields')
        points, _, labels, scores = result
        return (points, labels, scores), examples

    def evaluate_outputs(self, outputs, truths):
        # NOTE: truths are point, visible, label, bbox, then the extras; the shared
        # helper reads the extras after two fields, so it gets the last fields but two.
        crowded, area = detection_evaluators.coco_truth_extras(
            truths[2:], self.with_crowded, self.with_area)
        point, visible, label, bbox = truths[:4]
        result = eval_keypoint_detection_coco.eval_keypoint_detection_coco(
            *outputs, point, visible, label, bbox, area, crowded, sigmas=self.sigmas)
        return detection_evaluators.coco_report(self, result, COCO_KEYPOINT_PER_CLASS_KEY)
