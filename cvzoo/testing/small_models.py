"""Registered models built small, with random weights, for predict() and training tests.

:func:`build_small_model` builds any ``list_models()`` entry with the fewest classes the
tests use and the smallest input sizes its constructor takes, so that a CPU runs its
predict() in seconds. Only the models that refuse the defaults are listed below; a new
registration is built without being named here.

>>> task, model = build_small_model('ssd_tiny')
>>> task, type(model).__name__
('detection', 'SSDTiny')
"""

import dataclasses

import numpy

from cvzoo.core import config
from cvzoo.core import links as L
from cvzoo.models import get_model, get_model_class, model_info

N_CLASS = 3      # classifiers and segmenters
N_FG_CLASS = 2   # detectors
# the tasks whose models count their classes without the background (n_fg_class)
FG_CLASS_TASKS = ('detection', 'instance_segmentation', 'keypoint_detection')
# NOTE: the detectors that resize by a shorter side get a small one, so that a CPU (or the
# CuPy stand-in on it) runs them in seconds.
SMALL_RESIZE = {'min_size': 64, 'max_size': 96}
# models whose backbone BN is frozen (test mode in training too): the extractor's stages,
# run in order by calibrate_frozen_bn
FROZEN_BN_BACKBONES = {'fcis_resnet101': ('conv1', 'pool1', 'res2', 'res3', 'res4', 'res5')}
BUILD_KWARGS = {
    'faster_rcnn_vgg16': SMALL_RESIZE,
    'faster_rcnn_fpn_resnet50': SMALL_RESIZE,
    'faster_rcnn_fpn_resnet101': SMALL_RESIZE,
    'fasterrcnn_resnet50_fpn': SMALL_RESIZE,
    'fasterrcnn_resnet50_fpn_v2': SMALL_RESIZE,
    'fcis_resnet101': SMALL_RESIZE,
    'mask_rcnn_fpn_resnet50': SMALL_RESIZE,
    'mask_rcnn_fpn_resnet101': SMALL_RESIZE,
    # few instances: every one of random weights passes and pools its mask
    'maskrcnn_resnet50_fpn': {**SMALL_RESIZE, 'max_detections': 10},
    'maskrcnn_resnet50_fpn_v2': {**SMALL_RESIZE, 'max_detections': 10},
    # few instances: every one of random weights passes and pools its keypoints
    'keypointrcnn_resnet50_fpn': {**SMALL_RESIZE, 'max_detections': 10, 'n_point': 5},
    'retinanet_resnet50_fpn': SMALL_RESIZE,
    'pspnet_resnet50': {'input_size': (64, 64)},
    'pspnet_resnet101': {'input_size': (64, 64)},
    'deeplab_v3plus_xception65': {'min_input_size': (64, 64)},
    'espnet': {'n_class': 5},  # its decoder splits the classes into five branches
}
# segmenters' predict() resizes to the preset's size; a small one keeps it fast
SEGMENTATION_SIZE = 64
# models whose architecture comes from a Darknet cfg of their zoo entry: building them
# reads the cfg through the zoo (set $CVZOO_WEIGHTS_MIRROR to a folder holding it)
NEEDS_CFG = ('yolo_fastest', 'yolo_fastest_xl')


def n_class_of(name):
    """The classes :func:`build_small_model` gives the model ``name``, which its predict()
    answers with: ``n_fg_class`` for detectors, instance segmenters and keypoint
    detectors, ``n_class`` otherwise."""
    if model_info(name)['task'] in FG_CLASS_TASKS:
        return BUILD_KWARGS.get(name, {}).get('n_fg_class', N_FG_CLASS)
    return BUILD_KWARGS.get(name, {}).get('n_class', N_CLASS)


def small_kwargs(name):
    """The constructor arguments :func:`build_small_model` gives the model ``name``."""
    kwargs = dict(BUILD_KWARGS.get(name, {}))
    if model_info(name)['task'] in FG_CLASS_TASKS:
        kwargs.setdefault('n_fg_class', N_FG_CLASS)
    else:
        kwargs.setdefault('n_class', N_CLASS)
    return kwargs


def build_small_model(name, seed=0, pretrained_model=None, **overrides):
    """The model registered as ``name``, small, with random weights, on the CPU.

    Args:
        name (str): a ``list_models()`` name.
        seed (int): seeds NumPy's global generator before the weights are drawn.
        pretrained_model (str or None): a weight file of the small model to load
            through ``get_model(name, pretrained_model=...)``; None keeps the random
            weights.
        **overrides: constructor arguments that replace :func:`small_kwargs`'s.

    Returns:
        tuple: ``(task, model)``.
    """
    task = model_info(name)['task']
    kwargs = {**small_kwargs(name), **overrides}
    numpy.random.seed(seed)
    if pretrained_model is None:
        model = get_model_class(name)(**kwargs)
    else:
        model = get_model(name, pretrained_model=pretrained_model, **kwargs)
    if task == 'semantic_segmentation' and model.preset is not None and model.resize_input:
        model.preset = dataclasses.replace(model.preset, size=SEGMENTATION_SIZE)
    if name in FROZEN_BN_BACKBONES and pretrained_model is None:
        calibrate_frozen_bn(model, FROZEN_BN_BACKBONES[name])
    return task, model


def calibrate_frozen_bn(model, stages):
    """Set the statistics of every batch normalisation of ``model.extractor`` to those of
    one random image, run through its ``stages`` (attribute names, in order) in training
    mode.

    A backbone whose BN runs in test mode also in training (FCIS's ResNet-101) normalises
    nothing with random weights and the initial statistics (mean 0, variance 1): its
    features reach about 1e3 and its losses 1e6, which the first update turns into NaN.
    Trained weights come with their statistics; the small model gets these instead.
    """
    norms = [link for link in model.extractor.links()
             if isinstance(link, L.BatchNormalization)]
    decays = [norm.decay for norm in norms]
    img = numpy.random.RandomState(0).uniform(0, 255, (3, 48, 64)).astype(numpy.float32)
    h = model.prepare(img)[None]
    try:
        for norm in norms:
            norm.decay = 0.0
        with config.using_config('train', True), config.no_backprop_mode():
            for stage in stages:
                h = getattr(model.extractor, stage)(h)
    finally:
        for norm, decay in zip(norms, decays):
            norm.decay = decay
