"""The evaluation of each task during training: its evaluator class and its metric.

``cvzoo.training.train`` evaluates the validation set with the evaluator of the model's
task (DESIGN.md's predict() contract, the classes of :mod:`cvzoo.evaluators`) and plots
the task's metric:

=======================  ======================================  =========================
task                     evaluator                               metric (report key)
=======================  ======================================  =========================
classification           ClassificationEvaluator                 ``validation/main/top1``
detection                DetectionVOCEvaluator                   ``validation/main/map``
semantic_segmentation    SemanticSegmentationEvaluator           ``validation/main/miou``
instance_segmentation    InstanceSegmentationVOCEvaluator (0.5)  ``validation/main/map``
keypoint_detection       KeypointDetectionCOCOEvaluator          ``validation/main/map/
                                                                 iou=0.50:0.95/area=all/
                                                                 max_dets=20``
=======================  ======================================  =========================

A detector or an instance segmenter predicts with its ``'evaluate'`` preset (every
candidate a metric may count) during the evaluation, then gets its thresholds back.

>>> metric_key('semantic_segmentation')
'validation/main/miou'
"""

import contextlib
import dataclasses

import numpy

from cvzoo import errors, evaluators
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.evaluators.metrics.eval_keypoint_detection_coco import COCO_KEYPOINT_SIGMAS
from cvzoo.transforms.instance_segmentation_transform import drop_crowded

PREFIX = 'validation/main/'


@dataclasses.dataclass(frozen=True)
class TaskEvaluation:
    """How one task is evaluated.

    Attributes:
        evaluator (type): the class of :mod:`cvzoo.evaluators`.
        metric (str): its report key of the task's score (without the prefix).
        train_metric (str or None): a score the train chain reports, plotted beside it.
        kwargs (dict): further arguments of the evaluator.
    """

    evaluator: type
    metric: str
    train_metric: str | None = None
    kwargs: dict = dataclasses.field(default_factory=dict)


TASKS = {
    'classification': TaskEvaluation(evaluators.ClassificationEvaluator, 'top1',
                                      train_metric='main/accuracy'),
    'detection': TaskEvaluation(evaluators.DetectionVOCEvaluator, 'map'),
    'semantic_segmentation': TaskEvaluation(evaluators.SemanticSegmentationEvaluator, 'miou'),
    'instance_segmentation': TaskEvaluation(evaluators.InstanceSegmentationVOCEvaluator, 'map',
                                             kwargs={'iou_thresh': 0.5}),
    'keypoint_detection': TaskEvaluation(evaluators.KeypointDetectionCOCOEvaluator,
                                         'map/iou=0.50:0.95/area=all/max_dets=20'),
}


def task_evaluation(task):
    """The :class:`TaskEvaluation` of ``task``.

    Raises:
        cvzoo.errors.UsageError: an unknown task, naming the known ones.
    """
    if task not in TASKS:
        raise errors.UsageError(f'task: expected one of {sorted(TASKS)}, got {task!r}')
    return TASKS[task]


def metric_key(task):
    """The reported key of ``task``'s validation score."""
    return PREFIX + task_evaluation(task).metric


def plotted_metrics(task, with_validation):
    """The keys drawn in ``metric.png``: the train chain's score and the validation's."""
    evaluation = task_evaluation(task)
    keys = [evaluation.train_metric] if evaluation.train_metric else []
    return keys + ([metric_key(task)] if with_validation else [])


def make_evaluator(task, model, dataset, label_names, batchsize=8):
    """The evaluator of ``task`` over ``dataset`` (examples of the task's layout),
    reporting under ``validation/main/``, the model in its evaluation preset.

    Args:
        task (str): a key of :data:`TASKS`.
        model: the model (its ``predict``).
        dataset: the validation examples, as the dataset gives them (crowd regions of
            instance segmentation are dropped here).
        label_names (sequence of str): the classes, for the per-class keys.
        batchsize (int): images per predict() call.
    """
    evaluation = task_evaluation(task)
    kwargs = dict(evaluation.kwargs)
    if task == 'instance_segmentation':
        dataset = TransformDataset(dataset, drop_crowded)
    if task == 'keypoint_detection':
        kwargs['sigmas'] = keypoint_sigmas(model)
    evaluator = evaluation.evaluator(dataset, _EvaluatePreset(model), label_names=label_names,
                                     batchsize=batchsize, prefix=PREFIX, quiet=True, **kwargs)
    return evaluator


def keypoint_sigmas(model):
    """COCO's OKS sigmas for a 17-point model; for K other points, K times their mean
    (the spread of an average COCO keypoint)."""
    n_point = getattr(model, 'n_point', len(COCO_KEYPOINT_SIGMAS))
    if n_point == len(COCO_KEYPOINT_SIGMAS):
        return None
    return numpy.full(n_point, COCO_KEYPOINT_SIGMAS.mean())


class _EvaluatePreset:
    """``model.predict`` run under the model's ``'evaluate'`` preset when it has one."""

    def __init__(self, model):
        self.model = model

    def predict(self, imgs):
        with evaluate_preset(self.model):
            return self.model.predict(imgs)


@contextlib.contextmanager
def evaluate_preset(model):
    """Within the block, ``model`` uses its ``'evaluate'`` thresholds (if it has presets);
    its thresholds before are restored after."""
    presets = getattr(model, 'presets', None)
    if not presets or 'evaluate' not in presets:
        yield model
        return
    before = (model.score_thresh, model.nms_thresh)
    model.use_preset('evaluate')
    try:
        yield model
    finally:
        model.score_thresh, model.nms_thresh = before
