"""MaskRCNNResNet50FPN: torchvision's ``maskrcnn_resnet50_fpn`` (v1; He et al., ICCV 2017),
its pre- and post-processing and COCO weights.

The box part is torchvision's Faster R-CNN ResNet-50 FPN
(:class:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.FasterRCNNResNet50FPN`:
frozen-BN ResNet-50 with eps 0 for the COCO file, ImageNet mean and std, shorter side
800 and longer at most 1333, 100 detections per image, the 91 COCO category ids mapped
to 80 labels). Its detections (in the resized image) are pooled again by the mask head
(torchvision's ``MaskRCNNHeads`` and ``MaskRCNNPredictor``: RoIAlign 14 x 14 from the
level torchvision's ``LevelMapper`` gives, four 3 x 3 convolutions, a 2 x 2 deconvolution
and a 1 x 1 convolution, cvzoo's :class:`~.mask_head.MaskHead`); the sigmoid of each
detection's class channel is pasted at its box scaled back to the input image, by
torchvision's rule (:func:`~cvzoo.models.instance_segmentation.mask_paste.
paste_masks_torchvision`), and thresholded at >= 0.5.

Differences from torchvision: those of the box part (NMS drops a box at IoU >=
``nms_thresh``); torchvision returns mask probabilities, cvzoo the masks at >= 0.5 (the
threshold of torchvision's COCO evaluation).
"""

import numpy

from cvzoo import errors
from cvzoo.core.serializers import dictionary
from cvzoo.datasets.coco.coco_label_names import coco_instance_segmentation_label_names
from cvzoo.models import zoo
from cvzoo.models.common import foreign_names
from cvzoo.models.detection import torchvision_coco_classes, torchvision_resnet_fpn
from cvzoo.models.detection.faster_rcnn import (
    torchvision_box_head,
    torchvision_fpn,
    torchvision_names,
)
from cvzoo.models.instance_segmentation import instance_segmenter, mask_paste
from cvzoo.models.instance_segmentation.mask_rcnn import mask_head

_MASK_PREFIXES = ('roi_heads.mask_head.', 'roi_heads.mask_predictor.')
_LEAF = {'weight': 'W', 'bias': 'b'}


class TorchvisionMaskHead(torchvision_box_head.TorchvisionLevelMapper, mask_head.MaskHead):
    """The mask head of torchvision's Mask R-CNN: :class:`MaskHead` with torchvision's
    level of each RoI (:class:`TorchvisionLevelMapper`)."""


@zoo.register('maskrcnn_resnet50_fpn', task='instance_segmentation')
class MaskRCNNResNet50FPN(torchvision_fpn.FasterRCNNResNet50FPN,
                          instance_segmenter.InstanceSegmenter):
    """torchvision's Mask R-CNN ResNet-50 FPN; see the module docstring.

    Weights keys: ``'coco'``, torchvision's ``MaskRCNN_ResNet50_FPN_Weights.COCO_V1``
    (COCO 2017 train; mask AP 34.6, box AP 37.9 on val2017).

    Args:
        n_fg_class (int or None): classes to segment; None takes the weights' (80 without
            weights). A number other than the weights' re-makes ``head/loc``,
            ``head/conf`` and ``mask_head/seg`` (without unused classes).
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth or
            cvzoo .npz) or None for random weights.
        min_size, max_size, trainable_backbone_layers, bn_eps, source: as
            :class:`FasterRCNNResNet50FPN`.
        max_detections (int): instances kept per image (torchvision's
            ``box_detections_per_img``, 100).

    For example (the weights are downloaded)::

        masks, labels, scores = MaskRCNNResNet50FPN(pretrained_model='coco').predict([img])
    """

    # the instance segmenter's predict(); the box part's prepare() and pad_batch()
    predict = instance_segmenter.InstanceSegmenter.predict

    def __init__(self, n_fg_class=None, pretrained_model=None, *, max_detections=100,
                 **kwargs):
        torchvision_resnet_fpn.check_positive_int('max_detections', max_detections)
        super().__init__(n_fg_class, pretrained_model, **kwargs)
        self.max_detections = max_detections

    def make_heads(self, n_class):
        """Build the box head and the mask head for ``n_class`` classes (background and
        unused ones included)."""
        super().make_heads(n_class)
        with self.init_scope():
            self.mask_head = self.make_mask_head(n_class)

    def make_mask_head(self, n_class):
        """The mask head (``mask_head``) for ``n_class`` classes; v1's convolutions have
        no BN."""
        return TorchvisionMaskHead(n_class, torchvision_fpn.FPN_SCALES)

    def reset_head(self, n_fg_class):
        """Re-make the class-dependent layers of the box and mask heads (no unused
        classes)."""
        super().reset_head(n_fg_class)
        self.mask_head.reset_classes(n_fg_class + 1)
        self.mask_head.to_device(self.device)

    def segment(self, x, sizes, prepared):
        """Per image ``(probs, bboxes, labels, scores)`` of the batch ``x``: the box
        part's detections (host arrays; boxes scaled back to the image, as torchvision's
        ``resize_boxes``) and their (R, 28, 28) mask probabilities (on the device)."""
        resized = [img.shape[1:] for img in prepared]
        hs = self.features(x)
        _, _, rois, roi_indices, _ = self.rpn(hs, x.shape[2:], resized)
        locs, confs = self.head(hs, rois, roi_indices)
        candidates = self.decode((locs, confs, rois, roi_indices), resized)
        bboxes, labels, scores = self.suppress(*candidates, len(sizes))
        probs = self.mask_head.probs(hs, bboxes, labels)
        ratios = [numpy.asarray(size, numpy.float32) / numpy.asarray(inner, numpy.float32)
                  for size, inner in zip(sizes, resized)]
        bboxes = [bbox * ratio[[1, 0, 1, 0]] for bbox, ratio in zip(bboxes, ratios)]
        return probs, bboxes, labels, scores

    def paste_masks(self, prob, bbox, size):
        """torchvision's paste (:func:`mask_paste.paste_masks_torchvision`)."""
        return mask_paste.paste_masks_torchvision(prob, bbox, size)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook: torchvision names (``'torchvision'``/``'torch'``)
        or cvzoo's. The box part's keys go as Faster R-CNN's (``map_torchvision_key``);
        the mask head's (``roi_heads.mask_head.mask_fcn{i}`` or ``.{i - 1}.0``, BN's
        ``.{i - 1}.1``, ``roi_heads.mask_predictor.conv5_mask``, ``.mask_fcn_logits``) to
        ``mask_head/conv{i}/conv``, ``mask_head/conv{i}/bn``, ``mask_head/conv5`` and
        ``mask_head/seg``, whose 91 COCO rows are reordered as the box predictor's.

        Raises:
            ValueError: another source.
            cvzoo.errors.WeightLoadError: file keys with no counterpart and model keys
                the file lacks (all named).
        """
        if source not in ('torchvision', 'torch'):
            return super().convert_weights(raw, source)
        expected = set(dictionary.state_arrays(self)) - {'n_unused_class'}
        mask_raw = {key: value for key, value in raw.items() if key.startswith(_MASK_PREFIXES)}
        box_raw = {key: value for key, value in raw.items() if key not in mask_raw}
        box_expected = {key for key in expected if not key.startswith('mask_head/')}
        arrays, n_unused_class = torchvision_names.convert_torchvision(
            box_raw, box_expected, source, map_key=self.map_torchvision_key)
        mask_arrays, unexpected = {}, []
        for key, value in mask_raw.items():
            try:
                name = _mask_key(key)
            except KeyError:
                unexpected.append(key)
                continue
            if name is not None and name not in expected:
                unexpected.append(key)
            elif name is not None:
                mask_arrays[name] = value
        mask_arrays = foreign_names.add_bn_counts(mask_arrays)
        missing = sorted(expected - box_expected - set(mask_arrays))
        if unexpected or missing:
            raise errors.WeightLoadError(
                f'Mask R-CNN weights ({source} names): mask head keys with no counterpart '
                f'in cvzoo: {", ".join(sorted(unexpected)) or "none"}; model keys missing '
                f'from the file: {", ".join(missing) or "none"}')
        if n_unused_class:
            for name in ('mask_head/seg/W', 'mask_head/seg/b'):
                mask_arrays[name] = torchvision_coco_classes.reorder_coco_classes(
                    mask_arrays[name], n_per_class=1)
        arrays.update(mask_arrays)
        arrays['n_unused_class'] = numpy.asarray(n_unused_class)
        return arrays


def _mask_key(key):
    """cvzoo name (None: dropped, a BN's ``num_batches_tracked``) of a torchvision mask
    head key; KeyError when it is not one."""
    parts = key.split('.')
    middle = '.'.join(parts[2:-1])
    if parts[1] == 'mask_head':
        for i in range(1, 5):
            if middle in (f'mask_fcn{i}', f'{i - 1}.0') and parts[-1] in _LEAF:
                return f'mask_head/conv{i}/conv/{_LEAF[parts[-1]]}'
            if middle == f'{i - 1}.1' and parts[-1] in torchvision_names.BN_LEAF:
                name = torchvision_names.BN_LEAF[parts[-1]]
                return None if name is None else f'mask_head/conv{i}/bn/{name}'
        raise KeyError(key)
    name = {'conv5_mask': 'mask_head/conv5', 'mask_fcn_logits': 'mask_head/seg'}.get(middle)
    if name is None or parts[-1] not in _LEAF:
        raise KeyError(key)
    return f'{name}/{_LEAF[parts[-1]]}'


_BOX_ENTRY = torchvision_fpn.FasterRCNNResNet50FPN.weights['coco']
MaskRCNNResNet50FPN.weights = {
    'coco': zoo.Weights(
        url='https://download.pytorch.org/models/maskrcnn_resnet50_fpn_coco-bf2d0c1e.pth',
        sha256='bf2d0c1e', source_format='torch_pth', n_class=80,
        label_names=tuple(coco_instance_segmentation_label_names), preset=_BOX_ENTRY.preset,
        reported=zoo.Score('mask_map_coco', 0.346, 'coco_val2017',
                           'torchvision docs, MaskRCNN_ResNet50_FPN_Weights.COCO_V1 '
                           '(mask_map 34.6, box_map 37.9, COCO val2017)'),
        notes="torchvision's v1 Mask R-CNN ResNet-50 FPN (FrozenBatchNorm eps 0); box AP "
              '37.9. Its 91-class box and mask predictors (COCO category ids) are '
              "reordered to the background, the 80 real classes in cvzoo's order and the "
              'ten unused ids, which stay in the softmax; masks pasted as torchvision '
              'pastes them and kept at >= 0.5.',
        convert_from='torchvision', box_convention='continuous', license='BSD-3-Clause'),
}
