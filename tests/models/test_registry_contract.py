"""Every registered model keeps the predict() contract of DESIGN.md.

As timm's tests/test_models.py, the test is parametrised over ``list_models()``: a model
is tested the moment it is registered, with no line to add here. Each model is built
small with random weights (``cvzoo.testing.small_models``, through the
``build_small_model`` fixture) and predicts two images of other sizes in one call, a
(3, 48, 64) float32 array and an (80, 56, 3) uint8 array, checked by its task's
``cvzoo.testing`` assertion (host NumPy arrays, shapes, dtypes, label range, boxes
inside the image and scores by decreasing value, label maps at the image's size).
Detectors predict with their 'evaluate' preset and a lower score threshold, so that
random weights still give detections to check (all but faster_rcnn_fpn_resnet101 do:
its random ResNet-101 features grow to about 1e6 and its RPN keeps no RoI).

The whole file runs in about 40 s on 2 CPU cores (vgg16, yolov3, ssd512 and
faster_rcnn_vgg16 take the longest, 2 to 7 s each), so no model is left to the slow run.
"""

import numpy
import pytest

from cvzoo.models import list_models
from cvzoo.models.registry import TASKS
from cvzoo.testing import model_checks, small_models

# below the 'evaluate' presets (0.01 to 0.05), so that random weights give detections
# (RetinaNet's scores start near its prior, 0.01)
LOW_SCORE_THRESH = 0.005


def _images():
    rng = numpy.random.RandomState(0)
    chw = rng.uniform(0, 255, (3, 48, 64)).astype(numpy.float32)
    hwc = rng.randint(0, 256, (80, 56, 3)).astype(numpy.uint8)
    return [chw, hwc]


@pytest.mark.parametrize('name', list_models())
def test_predict_keeps_the_contract(name, build_small_model):
    task, model = build_small_model(name)
    if task in small_models.FG_CLASS_TASKS:
        model.use_preset('evaluate')
        model.score_thresh = LOW_SCORE_THRESH
    model_checks.ASSERTIONS[task](model, _images(), small_models.n_class_of(name))


def test_every_task_has_a_check():
    assert sorted(model_checks.ASSERTIONS) == sorted(TASKS)
