"""torchvision's RetinaNet parameter names mapped to cvzoo's.

torchvision                                         cvzoo
backbone.body.<ResNet-50 names>                     extractor/base/<ResNet names>
backbone.fpn.inner_blocks.{i}[.0].{weight,bias}     extractor/inner/{i}/{W,b}
backbone.fpn.layer_blocks.{i}[.0].{weight,bias}     extractor/outer/{i}/{W,b}
backbone.fpn.extra_blocks.p{6,7}.{weight,bias}      extractor/p{6,7}/{W,b}
head.classification_head.conv.{2k}.{weight,bias}    head/conf_tower/{k}/{W,b}
head.classification_head.cls_logits.*               head/conf/*
head.regression_head.conv.{2k}.*                    head/loc_tower/{k}/*
head.regression_head.bbox_reg.*                     head/loc/*

Newer torchvision releases name the convolutions ``conv.{k}.0.*`` and
``inner_blocks.{i}.0.*``; both forms are read. torchvision's COCO head has 91 outputs
per anchor, indexed by COCO category id (0 and ten unused ids are 'N/A'); the rows of
the 80 real categories are kept, in cvzoo's label order.
"""

import re

from cvzoo import errors
from cvzoo.datasets.coco.coco_label_names import coco_label_to_category_id
from cvzoo.models.classification.resnet import name_mapping as resnet_names
from cvzoo.models.common import foreign_names

TORCHVISION_COCO_CLASSES = 91
_LEAF = {'weight': 'W', 'bias': 'b'}
_PATTERNS = (
    (re.compile(r'backbone\.fpn\.inner_blocks\.(\d+)(?:\.0)?\.(weight|bias)'),
     lambda m: f'extractor/inner/{m[1]}/{_LEAF[m[2]]}'),
    (re.compile(r'backbone\.fpn\.layer_blocks\.(\d+)(?:\.0)?\.(weight|bias)'),
     lambda m: f'extractor/outer/{m[1]}/{_LEAF[m[2]]}'),
    (re.compile(r'backbone\.fpn\.extra_blocks\.(p6|p7)\.(weight|bias)'),
     lambda m: f'extractor/{m[1]}/{_LEAF[m[2]]}'),
    (re.compile(r'head\.(classification|regression)_head\.conv\.(\d+)\.(weight|bias)'),
     lambda m: _old_tower_key(m)),
    (re.compile(r'head\.(classification|regression)_head\.conv\.(\d+)\.0\.(weight|bias)'),
     lambda m: f'head/{_tower(m[1])}/{m[2]}/{_LEAF[m[3]]}'),
    (re.compile(r'head\.classification_head\.cls_logits\.(weight|bias)'),
     lambda m: f'head/conf/{_LEAF[m[1]]}'),
    (re.compile(r'head\.regression_head\.bbox_reg\.(weight|bias)'),
     lambda m: f'head/loc/{_LEAF[m[1]]}'),
)


def _tower(head):
    return 'conf_tower' if head == 'classification' else 'loc_tower'


def _old_tower_key(match):
    """conv.{0,2,4,6} (convolutions between ReLUs) -> tower index 0..3."""
    index = int(match[2])
    if index % 2:
        raise KeyError(match[0])
    return f'head/{_tower(match[1])}/{index // 2}/{_LEAF[match[3]]}'


def _body_key(key):
    """A ResNet key of the backbone through the ResNet mapping (None: dropped)."""
    try:
        converted = resnet_names.convert_resnet({key: None}, 'torchvision')
    except errors.WeightLoadError:
        raise KeyError(key) from None
    names = [name for name in converted if not name.endswith('/N')]
    return 'extractor/base/' + names[0] if names else None


def map_key(key):
    """cvzoo key (or None to drop) of a torchvision RetinaNet key; KeyError if unknown."""
    if key.startswith('backbone.body.'):
        return _body_key(key.removeprefix('backbone.body.'))
    for pattern, rule in _PATTERNS:
        match = pattern.fullmatch(key)
        if match:
            return rule(match)
    raise KeyError(key)


def coco_rows(array, n_anchor):
    """Keep the 80 COCO categories of a 91-way (n_anchor * 91, ...) class layer."""
    rows = array.reshape((n_anchor, TORCHVISION_COCO_CLASSES) + array.shape[1:])
    rows = rows[:, list(coco_label_to_category_id)]
    return rows.reshape((-1,) + array.shape[1:])


def _unknown_keys(raw, expected):
    unknown = []
    for key in raw:
        try:
            name = map_key(key)
        except KeyError:
            unknown.append(key)
            continue
        if name is not None and expected is not None and name not in expected:
            unknown.append(key)
    return unknown


def convert_torchvision(raw, n_anchor=9, source='torchvision', expected=None):
    """Map a torchvision RetinaNet state dict to cvzoo's names.

    Args:
        raw (dict): torchvision name -> NumPy array.
        n_anchor (int): anchors per cell of the heads.
        source (str): named in error messages.
        expected (set of str or None): the model's keys; file keys that map outside it
            are reported with the unknown ones.

    Returns:
        dict: cvzoo name -> array (BN counts ``N`` added as 0).

    Raises:
        cvzoo.errors.WeightLoadError: keys with no counterpart, all named at once.
    """
    unknown = _unknown_keys(raw, expected)
    if unknown:
        raise errors.WeightLoadError(
            f'RetinaNet weights ({source} names): {len(unknown)} keys have no counterpart in '
            f'cvzoo: {", ".join(sorted(unknown))}')
    arrays = foreign_names.map_keys(raw, map_key, source, 'RetinaNet weights')
    for name in ('head/conf/W', 'head/conf/b'):
        if name in arrays and arrays[name].shape[0] == n_anchor * TORCHVISION_COCO_CLASSES:
            arrays[name] = coco_rows(arrays[name], n_anchor)
    return foreign_names.add_bn_counts(arrays)
