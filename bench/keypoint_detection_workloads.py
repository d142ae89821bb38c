"""What bench_models.py measures for keypoint detection, inside its child process.

``WORKLOADS['predict'](name, runs, small)`` and ``WORKLOADS['train'](name, small)``, as
instance_segmentation_workloads.py (whose model building this module uses):

- predict: predict() of the 500x375 detection image at batch 1 with the 'visualize' and
  'evaluate' presets: the median seconds, the median seconds of the heatmap decoding
  (``heatmap_decoding.heatmaps_to_points``) inside it and the people returned;
- train: one MomentumSGD iteration of KeypointRCNNTrainChain at batch 1 on that image
  with three people (model_workloads.GT_BBOX as their boxes, 17 points spread over each
  box, all visible).

Models run with random weights (the person class) unless their weight files are in the
local mirror.
"""

import instance_segmentation_workloads  # beside this file
import model_workloads
import numpy

from cvzoo.models.keypoint_detection import heatmap_decoding, keypoint_rcnn_train_chain


def keypoint_detection_predict(name, runs, small=False):
    """predict() per preset: median seconds, median decoding seconds, people."""
    model, weights = instance_segmentation_workloads.build_model(name, small)
    clock = model_workloads.CallClock(heatmap_decoding, 'heatmaps_to_points')
    return instance_segmentation_workloads.preset_predict(model, weights, runs, clock)


def keypoint_detection_train(name, small=False):
    """One training iteration at batch 1 (the task image, 3 people)."""
    model, _ = instance_segmentation_workloads.build_model(name, small)
    img, _ = model_workloads.task_image('detection')
    x = model.prepare(img)
    ratio = numpy.asarray(x.shape[1:], numpy.float32) / numpy.asarray(img.shape[1:])
    bbox = (model_workloads.GT_BBOX * ratio[[1, 0, 1, 0]]).astype(numpy.float32)
    spread = numpy.linspace(0.1, 0.9, model.n_point, dtype=numpy.float32)[None, :, None]
    point = bbox[:, None, :2] + spread * (bbox[:, None, 2:] - bbox[:, None, :2])
    visible = numpy.ones(point.shape[:2], bool)
    label = numpy.zeros(len(bbox), numpy.int32)
    chain = keypoint_rcnn_train_chain.KeypointRCNNTrainChain(model)
    seconds, loss = model_workloads.time_train_iteration(
        chain, (model.pad_batch([x]), [bbox], [label], [point], [visible], [x.shape[1:]]))
    return {'train_seconds': seconds, 'train_chain': type(chain).__name__, 'loss': loss}


WORKLOADS = {'predict': keypoint_detection_predict, 'train': keypoint_detection_train}
