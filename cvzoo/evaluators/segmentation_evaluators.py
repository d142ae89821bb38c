"""Evaluators for semantic segmentation and classification."""

import numpy

from cvzoo.evaluators import evaluator
from cvzoo.evaluators.metrics import eval_classification, eval_semantic_segmentation


class SemanticSegmentationEvaluator(evaluator.Evaluator):
    """Evaluate ``labels = target.predict(imgs)`` on ``img, label`` examples.

    Report keys: ``'miou'``, ``'pixel_accuracy'``, ``'mean_class_accuracy'`` and
    ``'iou/<label name>'``, ``'class_accuracy/<label name>'`` per class.
    """

    name = 'semantic_segmentation'

    def evaluate_outputs(self, outputs, truths):
        result = eval_semantic_segmentation.eval_semantic_segmentation(outputs[0], truths[0])
        report = {key: result[key] for key in ('miou', 'pixel_accuracy', 'mean_class_accuracy')}
        report.update(self.per_class('iou', result['iou']))
        report.update(self.per_class('class_accuracy', result['class_accuracy']))
        return report


class ClassificationEvaluator(evaluator.Evaluator):
    """Evaluate ``probs = target.predict(imgs)`` on ``img, label``: keys 'top1', 'top5'."""

    name = 'classification'

    def evaluate_outputs(self, outputs, truths):
        scores = numpy.stack(outputs[0]) if outputs[0] else numpy.zeros((0, 1))
        top_k = tuple(k for k in (1, 5) if k <= max(scores.shape[1], 1))
        return eval_classification.eval_classification(
            scores, numpy.array(truths[0]).reshape(-1), top_k=top_k)
