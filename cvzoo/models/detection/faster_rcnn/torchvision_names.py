"""torchvision's Faster R-CNN FPN parameter names mapped to cvzoo's.

torchvision                                         cvzoo
backbone.body.<ResNet-50 names>                     extractor/base/<ResNet names>
backbone.fpn.inner_blocks.{i}[.0].{weight,bias}     extractor/inner/{i}/{W,b}
backbone.fpn.layer_blocks.{i}[.0].{weight,bias}     extractor/outer/{i}/{W,b}
rpn.head.conv[.0.0].{weight,bias}                   rpn/conv/{W,b}
rpn.head.cls_logits.*                               rpn/conf/*
rpn.head.bbox_pred.*                                rpn/loc/*
roi_heads.box_head.fc6.*, fc7.*                     head/fc1/*, head/fc2/*
roi_heads.box_predictor.cls_score.*                 head/conf/*
roi_heads.box_predictor.bbox_pred.*                 head/loc/*

The backbone's names are RetinaNet's (same ResNet-50 and FPN modules). Newer torchvision
releases name the RPN's convolution ``conv.0.0`` and the FPN's ``inner_blocks.{i}.0``;
both forms are read. torchvision's COCO predictor has 91 classes indexed by COCO category
id (0 is the background, ten ids are unused 'N/A'); its rows are reordered to the
background, the 80 real categories in cvzoo's label order and the ten unused ids, which
stay in the softmax (:mod:`~cvzoo.models.detection.torchvision_coco_classes`).
"""

import re

from cvzoo import errors
from cvzoo.models.classification.resnet import name_mapping as resnet_names
from cvzoo.models.detection import torchvision_coco_classes
from cvzoo.models.detection.retinanet import name_mapping as retinanet_names

TORCHVISION_COCO_CLASSES = torchvision_coco_classes.TORCHVISION_COCO_CLASSES
N_COCO_UNUSED_CLASS = len(torchvision_coco_classes.COCO_UNUSED_IDS)
_LEAF = {'weight': 'W', 'bias': 'b'}
_PATTERNS = (
    (re.compile(r'rpn\.head\.conv(?:\.0\.0)?\.(weight|bias)'), 'rpn/conv'),
    (re.compile(r'rpn\.head\.cls_logits\.(weight|bias)'), 'rpn/conf'),
    (re.compile(r'rpn\.head\.bbox_pred\.(weight|bias)'), 'rpn/loc'),
    (re.compile(r'roi_heads\.box_head\.fc6\.(weight|bias)'), 'head/fc1'),
    (re.compile(r'roi_heads\.box_head\.fc7\.(weight|bias)'), 'head/fc2'),
    (re.compile(r'roi_heads\.box_predictor\.cls_score\.(weight|bias)'), 'head/conf'),
    (re.compile(r'roi_heads\.box_predictor\.bbox_pred\.(weight|bias)'), 'head/loc'),
)


def map_key(key):
    """cvzoo key (or None to drop) of a torchvision Faster R-CNN key; KeyError if unknown."""
    if key.startswith('backbone.') and '.extra_blocks.' not in key:
        return retinanet_names.map_key(key)
    for pattern, prefix in _PATTERNS:
        match = pattern.fullmatch(key)
        if match:
            return f'{prefix}/{_LEAF[match[1]]}'
    raise KeyError(key)


def _classify_keys(raw):
    """(cvzoo name per file key or None, file keys with no counterpart)."""
    names, unknown = {}, []
    for key in raw:
        try:
            names[key] = map_key(key)
        except KeyError:
            unknown.append(key)
    return names, unknown


def convert_torchvision(raw, expected, source='torchvision'):
    """Map a torchvision Faster R-CNN FPN state dict to cvzoo's names.

    Args:
        raw (dict): torchvision name -> NumPy array.
        expected (set of str): the model's parameter and BN keys.
        source (str): named in error messages.

    Returns:
        tuple: ``(arrays, n_unused_class)``: cvzoo name -> array (BN counts ``N`` added
        as 0), and the number of unused (softmax-only) classes at the end of the
        predictor: 10 when it has torchvision's 91 COCO classes, whose rows are then
        reordered, else 0 (the rows kept as they are).

    Raises:
        cvzoo.errors.WeightLoadError: file keys with no counterpart in the model and
            model keys the file does not fill, all named in one message.
    """
    names, unexpected = _classify_keys(raw)
    unexpected += [key for key, name in names.items() if name is not None
                   and name not in expected]
    arrays = resnet_names.add_bn_counts(
        {name: raw[key] for key, name in names.items() if name in expected})
    missing = sorted(expected - set(arrays))
    if unexpected or missing:
        raise errors.WeightLoadError(
            f'Faster R-CNN FPN weights ({source} names): {len(unexpected)} file keys have '
            f'no counterpart in cvzoo: {", ".join(sorted(unexpected)) or "none"}; '
            f'{len(missing)} model keys are missing from the file: '
            f'{", ".join(missing) or "none"}')
    if arrays['head/conf/b'].shape[0] != TORCHVISION_COCO_CLASSES:
        return arrays, 0
    for name, n_per_class in (('head/conf/W', 1), ('head/conf/b', 1), ('head/loc/W', 4),
                              ('head/loc/b', 4)):
        if arrays[name].shape[0] == TORCHVISION_COCO_CLASSES * n_per_class:
            arrays[name] = torchvision_coco_classes.reorder_coco_classes(
                arrays[name], n_per_class=n_per_class)
    return arrays, N_COCO_UNUSED_CLASS
