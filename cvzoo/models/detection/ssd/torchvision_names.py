"""torchvision's ``ssd300_vgg16`` parameter names mapped to cvzoo's SSD names.

torchvision                                   cvzoo
backbone.features.{0,2,5,...,21}.*            extractor/conv1_1 ... conv4_3
backbone.scale_weight                         extractor/norm4/scale
backbone.extra.0.{1,3,5}.*                    extractor/conv5_1 ... conv5_3
backbone.extra.0.7.{1,3}.*                    extractor/conv6, conv7
backbone.extra.{1..4}.{0,2}.*                 extractor/conv8_1, conv8_2 ... conv11_2
head.classification_head.module_list.{k}.*    multibox/conf/{k}
head.regression_head.module_list.{k}.*        multibox/loc/{k}

with ``weight`` -> ``W`` and ``bias`` -> ``b``; both sides keep (out, in, kh, kw).

torchvision's COCO head scores 91 classes per anchor, indexed by COCO category id: 0 is
the background and ten ids are 'N/A' (unused by COCO). Their rows are reordered to
cvzoo's (:mod:`~cvzoo.models.detection.torchvision_coco_classes`): the background, the
80 categories in cvzoo's label order, then the ten unused ones, which stay in the
softmax (see ``ssd_vgg16_torchvision``).
"""

import numpy

from cvzoo import errors
from cvzoo.models.detection import torchvision_coco_classes

TORCHVISION_COCO_CLASSES = torchvision_coco_classes.TORCHVISION_COCO_CLASSES
COCO_UNUSED_IDS = torchvision_coco_classes.COCO_UNUSED_IDS
# torchvision's class index of each cvzoo conf column in the COCO layout
COCO_COLUMN_ORDER = torchvision_coco_classes.COCO_CLASS_ORDER
_LEAF = {'weight': 'W', 'bias': 'b'}
_VGG_FEATURES = dict(zip((0, 2, 5, 7, 10, 12, 14, 17, 19, 21),
                         ('conv1_1', 'conv1_2', 'conv2_1', 'conv2_2', 'conv3_1', 'conv3_2',
                          'conv3_3', 'conv4_1', 'conv4_2', 'conv4_3')))
# extra.0 is conv5 (after pool4), then pool5 and fc (conv6, conv7); extra.1-4 conv8-conv11
_EXTRA_BLOCKS = {'0.1': 'conv5_1', '0.3': 'conv5_2', '0.5': 'conv5_3', '0.7.1': 'conv6',
                 '0.7.3': 'conv7'} | {
    f'{block}.{index}': f'conv{block + 7}_{part}'
    for block in range(1, 5) for index, part in ((0, 1), (2, 2))}


def _torchvision_to_cvzoo(n_map=6):
    """The whole name table (torchvision key -> cvzoo key)."""
    table = {'backbone.scale_weight': 'extractor/norm4/scale'}
    prefixes = {f'backbone.features.{i}': f'extractor/{name}'
                for i, name in _VGG_FEATURES.items()}
    prefixes.update({f'backbone.extra.{key}': f'extractor/{name}'
                     for key, name in _EXTRA_BLOCKS.items()})
    for k in range(n_map):
        prefixes[f'head.classification_head.module_list.{k}'] = f'multibox/conf/{k}'
        prefixes[f'head.regression_head.module_list.{k}'] = f'multibox/loc/{k}'
    for prefix, name in prefixes.items():
        for leaf, short in _LEAF.items():
            table[f'{prefix}.{leaf}'] = f'{name}/{short}'
    return table


NAMES = _torchvision_to_cvzoo()


def convert_torchvision(raw, source='torchvision'):
    """Map a torchvision ``ssd300_vgg16`` state dict to cvzoo's names.

    A class head with 91 outputs per anchor (torchvision's COCO layout) is reordered to
    cvzoo's (``torchvision_coco_classes.reorder_coco_classes``); any other class count is
    kept as it is (column 0 background).

    Args:
        raw (dict): torchvision name -> NumPy array.
        source (str): named in error messages.

    Returns:
        tuple: ``(arrays, n_unused_class)``: cvzoo name -> array, and the number of
        unused (softmax-only) classes at the end of each class head (10 or 0).

    Raises:
        cvzoo.errors.WeightLoadError: file keys with no counterpart, all named at once.
    """
    unknown = sorted(key for key in raw if key not in NAMES)
    if unknown:
        raise errors.WeightLoadError(
            f'SSD300VGG16 weights ({source} names): {len(unknown)} keys have no counterpart '
            f'in cvzoo: {", ".join(unknown)}')
    arrays = {NAMES[key]: numpy.asarray(value) for key, value in raw.items()}
    n_unused_class = 0
    for k in range(6):
        n_anchor = len(arrays.get(f'multibox/loc/{k}/b', ())) // 4
        conf = [f'multibox/conf/{k}/W', f'multibox/conf/{k}/b']
        if n_anchor and all(name in arrays for name in conf) and \
                len(arrays[conf[1]]) == n_anchor * TORCHVISION_COCO_CLASSES:
            for name in conf:
                arrays[name] = torchvision_coco_classes.reorder_coco_classes(arrays[name],
                                                                             n_anchor)
            n_unused_class = len(COCO_UNUSED_IDS)
    return arrays, n_unused_class
