"""What bench_models.py measures for instance segmentation, inside its child process.

``WORKLOADS['predict'](name, runs, small)`` and ``WORKLOADS['train'](name, small)``
build the registered instance segmenter ``name`` and return a dict of plain numbers and
strings, as model_workloads.py does for the other tasks (whose helpers this module
uses):

- predict: predict() of the 500x375 detection image at batch 1 with the 'visualize' and
  'evaluate' presets: the median seconds, the median seconds of the model's
  ``paste_masks()`` calls inside it (the mask paste) and the instances returned;
- train: one MomentumSGD iteration of the model's train chain (FCISTrainChain,
  MaskRCNNTrainChain, torchvision's Mask R-CNN chain) at batch 1 on that image with
  three ground-truth instances (rectangular masks of model_workloads.GT_BBOX).

Models run with random weights (20 classes) unless all their weight files are in the
local mirror. ``small`` builds the model as the tests do
(:func:`cvzoo.testing.small_models.build_small_model`), with the shorter side resized to
64 pixels where the model takes ``min_size``: a smoke run, not a measurement.
"""

import inspect
import statistics
import time

import model_workloads  # beside this file
import numpy

from cvzoo.models import zoo
from cvzoo.testing import small_models

TASK = 'instance_segmentation'
N_FG_CLASS = 20


def build_model(name, small=False):
    """``(model, weights)``: mirrored real weights, random ones, or the small build."""
    if small:
        model_class = zoo.get_model_class(name)
        parameters = inspect.signature(model_class.__init__).parameters
        if 'min_size' in parameters and name not in small_models.BUILD_KWARGS:
            numpy.random.seed(0)
            model = model_class(n_fg_class=small_models.N_FG_CLASS,
                                **small_models.SMALL_RESIZE)
        else:
            _, model = small_models.build_small_model(name)
        return model, f'random, {small_models.N_FG_CLASS} classes (small)'
    key = model_workloads.mirrored_key(name)
    if key is not None:
        return zoo.get_model(name, pretrained_model=key), f'{key} (real)'
    return (zoo.get_model(name, pretrained_model=None, n_fg_class=N_FG_CLASS),
            f'random, {N_FG_CLASS} classes')


def instance_segmentation_predict(name, runs, small=False):
    """predict() per preset: median seconds, median mask-paste seconds, instances."""
    model, weights = build_model(name, small)
    return preset_predict(model, weights, runs, model_workloads.CallClock(model, 'paste_masks'))


def preset_predict(model, weights, runs, clock):
    """``model.predict()`` of the detection image per preset after a warm-up: the median
    seconds, the median seconds ``clock`` counted inside it (None where it saw no call)
    and the instances of the first returned list."""
    img, image = model_workloads.task_image('detection')
    result = {'weights': weights, 'image': image, 'n_param': model_workloads.n_param(model),
              'input': 'x'.join(map(str, model.prepare(img).shape[1:]))}
    model.use_preset('evaluate')
    model.predict([img])  # warm-up
    for preset in ('visualize', 'evaluate'):
        model.use_preset(preset)
        totals, posts = [], []
        for _ in range(runs):
            clock.reset()
            start = time.perf_counter()
            instances = model.predict([img])[0]
            totals.append(time.perf_counter() - start)
            posts.append(clock.seconds if clock.calls else None)
        result[preset] = {'seconds': statistics.median(totals),
                          'detections': len(instances[0]),
                          'post_seconds': None if None in posts else statistics.median(posts)}
    return result


def _torchvision_mask_rcnn_class():
    """torchvision's Mask R-CNN class of the zoo, or None where it is not there."""
    try:
        from cvzoo.models.instance_segmentation.mask_rcnn import torchvision_mask_rcnn
    except ImportError:
        return None
    return torchvision_mask_rcnn.MaskRCNNResNet50FPN


def _instances(model, img):
    """The network input of ``img`` and three instances on it: boxes (GT_BBOX scaled),
    labels and rectangular masks at the input's size."""
    x = model.prepare(img)
    ratio = numpy.asarray(x.shape[1:], numpy.float32) / numpy.asarray(img.shape[1:])
    bbox = numpy.round(model_workloads.GT_BBOX * ratio[[1, 0, 1, 0]]).astype(numpy.float32)
    rows = numpy.arange(x.shape[1])[None, :, None]
    cols = numpy.arange(x.shape[2])[None, None, :]
    masks = ((rows >= bbox[:, 1, None, None]) & (rows < bbox[:, 3, None, None])
             & (cols >= bbox[:, 0, None, None]) & (cols < bbox[:, 2, None, None]))
    label = model_workloads.GT_LABEL % model.n_fg_class  # the small build has 2 classes
    return x, bbox, label, masks


def _train_batch(model, img):
    """``(chain, args)`` of one training iteration on ``img`` with three instances.

    Raises:
        model_workloads.NoTrainChain: the bench knows no train chain for the model.
    """
    from cvzoo.models.instance_segmentation.fcis import fcis, fcis_train_chain
    from cvzoo.models.instance_segmentation.mask_rcnn import (mask_rcnn_fpn_resnet,
                                                               mask_rcnn_train_chain)

    torchvision_class = _torchvision_mask_rcnn_class()
    x, bbox, label, masks = _instances(model, img)
    if isinstance(model, fcis.FCIS):  # one image at a time, with its resize factor
        return (fcis_train_chain.FCISTrainChain(model),
                (x[None], [bbox], [label], [masks], [x.shape[2] / img.shape[2]]))
    if isinstance(model, mask_rcnn_fpn_resnet.MaskRCNNFPNResNet):
        chain = mask_rcnn_train_chain.MaskRCNNTrainChain(model)
    elif torchvision_class is not None and isinstance(model, torchvision_class):
        chain = mask_rcnn_train_chain.TorchvisionMaskRCNNTrainChain(model)
    else:
        raise model_workloads.NoTrainChain(
            f'{type(model).__name__}: the bench knows no train chain for it')
    return chain, (model.pad_batch([x]), [bbox], [label], [masks], [x.shape[1:]])


def instance_segmentation_train(name, small=False):
    """One training iteration at batch 1 (the task image, 3 instances)."""
    model, _ = build_model(name, small)
    img, _ = model_workloads.task_image('detection')
    chain, args = _train_batch(model, img)
    seconds, loss = model_workloads.time_train_iteration(chain, args)
    return {'train_seconds': seconds, 'train_chain': type(chain).__name__, 'loss': loss}


WORKLOADS = {'predict': instance_segmentation_predict, 'train': instance_segmentation_train}
