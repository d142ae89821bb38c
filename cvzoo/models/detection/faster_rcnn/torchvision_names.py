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
both forms are read.

The v2 models (``fasterrcnn_resnet50_fpn_v2``, :func:`map_key_v2`) differ in the FPN, the
RPN's convolutions and the box head; ``<bn>`` is BN's weight, bias, running_mean and
running_var (cvzoo's gamma, beta, avg_mean, avg_var; num_batches_tracked is dropped):

backbone.fpn.inner_blocks.{i}.0.weight              extractor/inner/{i}/conv/W
backbone.fpn.inner_blocks.{i}.1.<bn>                extractor/inner/{i}/bn/<bn>
backbone.fpn.layer_blocks.{i}.{0,1}.*               extractor/outer/{i}/{conv,bn}/*
rpn.head.conv.{k}.0.{weight,bias}                   rpn/conv/{k}/{W,b}
roi_heads.box_head.{k}.0.weight (k = 0 ... 3)       head/conv{k + 1}/conv/W
roi_heads.box_head.{k}.1.<bn>                       head/conv{k + 1}/bn/<bn>
roi_heads.box_head.5.{weight,bias}                  head/fc1/{W,b}
 torchvision's COCO predictor has 91 classes indexed by COCO category
id (0 is the background, ten ids are unused 'N/A'); its rows are reordered to the
background, the 80 real categories in cvzoo's label order and the ten unused ids, which
stay in the softmax (:mod:`~cvzoo.models.detection.torchvision_coco_classes`).
"""

import re

from cvzoo import errors
from cvzoo.models.common import foreign_names
from cvzoo.models.detection import torchvision_coco_classes, torchvision_fpn_names

TORCHVISION_COCO_CLASSES = torchvision_coco_classes.TORCHVISION_COCO_CLASSES
N_COCO_UNUSED_CLASS = len(torchvision_coco_classes.COCO_UNUSED_IDS)
_LEAF = {'weight': 'W', 'bias': 'b'}
# torch's BatchNorm2d leaves -> cvzoo's BatchNormalization (None: dropped)
BN_LEAF = {'weight': 'gamma', 'bias': 'beta', 'running_mean': 'avg_mean',
           'running_var': 'avg_var', 'num_batches_tracked': None}
_SHARED_PATTERNS = (
    (re.compile(r'rpn\.head\.cls_logits\.(weight|bias)'), 'rpn/conf'),
    (re.compile(r'rpn\.head\.bbox_pred\.(weight|bias)'), 'rpn/loc'),
    (re.compile(r'roi_heads\.box_predictor\.cls_score\.(weight|bias)'), 'head/conf'),
    (re.compile(r'roi_heads\.box_predictor\.bbox_pred\.(weight|bias)'), 'head/loc'),
)
_PATTERNS = (
    (re.compile(r'rpn\.head\.conv(?:\.0\.0)?\.(weight|bias)'), 'rpn/conv'),
    (re.compile(r'roi_heads\.box_head\.fc6\.(weight|bias)'), 'head/fc1'),
    (re.compile(r'roi_heads\.box_head\.fc7\.(weight|bias)'), 'head/fc2'),
) + _SHARED_PATTERNS
_BN = '(weight|bias|running_mean|running_var|num_batches_tracked)'
# v2: pattern -> function of the match giving the cvzoo key (or None)
_V2_PATTERNS = (
    (re.compile(r'backbone\.fpn\.inner_blocks\.(\d+)\.0\.weight'),
     lambda m: f'extractor/inner/{m[1]}/conv/W'),
    (re.compile(rf'backbone\.fpn\.inner_blocks\.(\d+)\.1\.{_BN}'),
     lambda m: _bn_key(f'extractor/inner/{m[1]}', m[2])),
    (re.compile(r'backbone\.fpn\.layer_blocks\.(\d+)\.0\.weight'),
     lambda m: f'extractor/outer/{m[1]}/conv/W'),
    (re.compile(rf'backbone\.fpn\.layer_blocks\.(\d+)\.1\.{_BN}'),
     lambda m: _bn_key(f'extractor/outer/{m[1]}', m[2])),
    (re.compile(r'rpn\.head\.conv\.(\d+)\.0\.(weight|bias)'),
     lambda m: f'rpn/conv/{m[1]}/{_LEAF[m[2]]}'),
    (re.compile(r'roi_heads\.box_head\.([0-3])\.0\.weight'),
     lambda m: f'head/conv{int(m[1]) + 1}/conv/W'),
    (re.compile(rf'roi_heads\.box_head\.([0-3])\.1\.{_BN}'),
     lambda m: _bn_key(f'head/conv{int(m[1]) + 1}', m[2])),
    (re.compile(r'roi_heads\.box_head\.5\.(weight|bias)'), lambda m: f'head/fc1/{_LEAF[m[1]]}'),
)


def _bn_key(prefix, leaf):
    """cvzoo key of a torch BatchNorm2d leaf under the Conv2DBNActiv ``prefix`` (or None)."""
    name = BN_LEAF[leaf]
    return None if name is None else f'{prefix}/bn/{name}'


def map_key(key):
    """cvzoo key (or None to drop) of a torchvision Faster R-CNN key; KeyError if unknown."""
    if key.startswith('backbone.') and '.extra_blocks.' not in key:
        return torchvision_fpn_names.map_key(key)
    return _prefixed_key(key, _PATTERNS)


def _prefixed_key(key, patterns):
    """``prefix/W`` or ``prefix/b`` of the first (pattern, prefix) matching ``key``;
    KeyError if none does."""
    for pattern, prefix in patterns:
        match = pattern.fullmatch(key)
        if match:
            return f'{prefix}/{_LEAF[match[1]]}'
    raise KeyError(key)


def map_key_v2(key):
    """cvzoo key (or None to drop) of a torchvision Faster R-CNN v2 key (also Mask R-CNN
    v2's box part); KeyError if unknown."""
    if key.startswith('backbone.body.'):
        return torchvision_fpn_names.map_key(key)
    for pattern, rule in _V2_PATTERNS:
        match = pattern.fullmatch(key)
        if match:
            return rule(match)
    return _prefixed_key(key, _SHARED_PATTERNS)


def _classify_keys(raw, map_key):
    """(cvzoo name per file key or None, file keys with no counterpart)."""
    names, unknown = {}, []
    for key in raw:
        try:
            names[key] = map_key(key)
        except KeyError:
            unknown.append(key)
    return names, unknown


def convert_torchvision(raw, expected, source='torchvision', *, map_key=map_key):
    """Map a torchvision Faster R-CNN FPN state dict to cvzoo's names.

    Args:
        raw (dict): torchvision name -> NumPy array.
        expected (set of str): the model's parameter and BN keys.
        source (str): named in error messages.
        map_key (callable): torchvision key -> cvzoo key or None (:func:`map_key`,
            :func:`map_key_v2`); KeyError for a key with no counterpart.

    Returns:
        tuple: ``(arrays, n_unused_class)``: cvzoo name -> array (BN counts ``N`` added
        as 0), and the number of unused (softmax-only) classes at the end of the
        predictor: 10 when it has torchvision's 91 COCO classes, whose rows are then
        reordered, else 0 (the rows kept as they are).

    Raises:
        cvzoo.errors.WeightLoadError: file keys with no counterpart in the model and
            model keys the file does not fill, all named in one message.
    """
    names, unexpected = _classify_keys(raw, map_key)
    unexpected += [key for key, name in names.items() if name is not None
                   and name not in expected]
    arrays = foreign_names.add_bn_counts(
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
