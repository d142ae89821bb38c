"""Public contract checks, used by cvzoo's tests and by users who add their own parts.

``check_function`` tests a differentiable function (forward, backward, double backward,
retention), ``check_autocast`` the same function under ``cvzoo.core.autocast``; the
``assert_is_*`` checks test models and datasets against DESIGN.md.
"""

from cvzoo.testing.dataset_checks import (
    assert_is_bbox_dataset,
    assert_is_instance_segmentation_dataset,
    assert_is_label_dataset,
    assert_is_semantic_segmentation_dataset,
)
from cvzoo.testing.autocast_checks import check_autocast
from cvzoo.testing.function_checks import check_forward, check_function, check_retention
from cvzoo.testing.model_checks import (
    assert_is_classification_model,
    assert_is_detection_model,
    assert_is_instance_segmentation_model,
    assert_is_keypoint_detection_model,
    assert_is_semantic_segmentation_model,
)

__all__ = [
    'assert_is_bbox_dataset', 'assert_is_instance_segmentation_dataset',
    'assert_is_label_dataset', 'assert_is_semantic_segmentation_dataset',
    'assert_is_classification_model', 'assert_is_detection_model',
    'assert_is_instance_segmentation_model', 'assert_is_keypoint_detection_model',
    'assert_is_semantic_segmentation_model',
    'check_autocast', 'check_forward', 'check_function', 'check_retention',
]
