"""Metrics (``eval_*``, pure NumPy) and the Evaluator classes that drive predict()."""

from cvzoo.evaluators.detection_evaluators import DetectionCOCOEvaluator, DetectionVOCEvaluator
from cvzoo.evaluators.evaluator import Evaluator
from cvzoo.evaluators.instance_segmentation_evaluators import (
    InstanceSegmentationCOCOEvaluator, InstanceSegmentationVOCEvaluator)
from cvzoo.evaluators.keypoint_detection_evaluators import KeypointDetectionCOCOEvaluator
from cvzoo.evaluators.metrics.eval_classification import eval_classification
from cvzoo.evaluators.metrics.eval_detection_coco import eval_detection_coco
from cvzoo.evaluators.metrics.eval_detection_voc import (calc_detection_voc_ap,
                                                         calc_detection_voc_prec_rec,
                                                         eval_detection_voc)
from cvzoo.evaluators.metrics.eval_instance_segmentation_coco import (
    eval_instance_segmentation_coco)
from cvzoo.evaluators.metrics.eval_instance_segmentation_voc import (
    calc_instance_segmentation_voc_prec_rec, eval_instance_segmentation_voc)
from cvzoo.evaluators.metrics.eval_keypoint_detection_coco import eval_keypoint_detection_coco
from cvzoo.evaluators.metrics.eval_semantic_segmentation import (
    calc_semantic_segmentation_confusion, calc_semantic_segmentation_iou,
    eval_semantic_segmentation)
from cvzoo.evaluators.metrics.run_length_masks import RunLengthMasks
from cvzoo.evaluators.segmentation_evaluators import (ClassificationEvaluator,
                                                      SemanticSegmentationEvaluator)
