"""MaskRCNNResNet50FPN: torchvision's ``maskrcnn_resnet50_fpn`` (v1; He et al., ICCV 2017),
its pre- and post-processing and COCO weights.

The box part is torchvision's Faster R-CNN ResNet-50 FPN, its parts and functions
(:mod:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn`:
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

import typing

import numpy

import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core.serializers import dictionary
from cvzoo.datasets.coco.coco_label_names import coco_instance_segmentation_label_names
from cvzoo.models import zoo
from cvzoo.models.common import foreign_names
from cvzoo.models.detection import (
    fpn,
    torchvision_coco_classes,
    torchvision_resnet_fpn,
    torchvision_transform,
)
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
class MaskRCNNResNet50FPN(L.Chain, instance_segmenter.InstanceSegmenter):
    """torchvision's Mask R-CNN ResNet-50 FPN; see the module docstring.

    The parts of torchvision's Faster R-CNN ResNet-50 FPN (``extractor``, ``rpn``,
    ``head``, built by :func:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.build`
    with the settings below) and ``mask_head``; the boxes are found by its functions
    (:func:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.detections`).

    Weights keys: ``'coco'``, torchvision's ``MaskRCNN_ResNet50_FPN_Weights.COCO_V1``
    (COCO 2017 train; mask AP 34.6, box AP 37.9 on val2017).

    Args:
        n_fg_class (int or None): classes to segment; None takes the weights' (80 without
            weights). A number other than the weights' re-makes ``head/loc``,
            ``head/conf`` and ``mask_head/seg`` (without unused classes).
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth or
            cvzoo .npz) or None for random weights.
        max_detections (int): instances kept per image (torchvision's
            ``box_detections_per_img``, 100).
        min_size, max_size, trainable_backbone_layers, bn_eps, source: as
            :class:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.
            FasterRCNNResNet50FPN`.

    Attributes:
        n_unused_class (int): classes at the end of the predictors that enter the
            softmax but are no label (10 with torchvision's COCO predictors, else 0).
        label_names (tuple of str or None): class names of the loaded weights.

    For example (the weights are downloaded)::

        masks, labels, scores = MaskRCNNResNet50FPN(pretrained_model='coco').predict([img])
    """

    presets: typing.ClassVar[dict] = torchvision_fpn.PRESETS
    # the box part's settings, those of torchvision's v1 Faster R-CNN
    min_bbox_size = torchvision_fpn.FasterRCNNResNet50FPN.min_bbox_size
    pad_stride = torchvision_fpn.FasterRCNNResNet50FPN.pad_stride
    pretrained_bn_eps = torchvision_fpn.PRETRAINED_BN_EPS
    map_torchvision_key = staticmethod(torchvision_names.map_key)
    fpn_bn_eps = None
    rpn_conv_depth = 1
    box_convention = 'continuous'
    label_names = None

    def __init__(self, n_fg_class=None, pretrained_model=None, *, max_detections=100,
                 min_size=800, max_size=1333, trainable_backbone_layers=3, bn_eps=None,
                 source=None):
        torchvision_resnet_fpn.check_positive_int('max_detections', max_detections)
        super().__init__()
        self.max_detections = max_detections
        torchvision_fpn.build(self, n_fg_class, pretrained_model, min_size=min_size,
                              max_size=max_size,
                              trainable_backbone_layers=trainable_backbone_layers,
                              bn_eps=bn_eps, source=source)

    def make_box_head(self, n_class):
        """The box head (``head``) for ``n_class`` classes; v1's is ``TwoMLPHead``."""
        return torchvision_box_head.TorchvisionBoxHead(n_class, fpn.FPN_SCALES)

    def make_heads(self, n_class):
        """Build the box head and the mask head for ``n_class`` classes (background and
        unused ones included)."""
        with self.init_scope():
            self.head = self.make_box_head(n_class)
            self.mask_head = self.make_mask_head(n_class)

    def make_mask_head(self, n_class):
        """The mask head (``mask_head``) for ``n_class`` classes; v1's convolutions have
        no BN."""
        return TorchvisionMaskHead(n_class, fpn.FPN_SCALES)

    @property
    def n_fg_class(self):
        """Classes the labels take (the heads also score the background and unused ones)."""
        return torchvision_fpn.n_fg_class(self)

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> normalised and resized (3, H', W') float32."""
        return torchvision_transform.prepare_image(img, self.min_size, self.max_size)

    def pad_batch(self, prepared):
        """Prepared images -> (B, 3, H, W) NumPy batch, zero-padded to multiples of 32."""
        return torchvision_transform.pad_batch(prepared, self.pad_stride)

    def features(self, x):
        """The FPN's maps of a prepared batch (the box part's)."""
        return torchvision_fpn.features(self, x)

    def reset_head(self, n_fg_class):
        """Re-make the class-dependent layers of the box and mask heads (no unused
        classes)."""
        torchvision_fpn.reset_head(self, n_fg_class)
        self.mask_head.reset_classes(n_fg_class + 1)
        self.mask_head.to_device(self.device)

    def segment(self, x, sizes, prepared):
        """Per image ``(probs, bboxes, labels, scores)`` of the batch ``x``: the box
        part's detections (host arrays; boxes scaled back to the image, as torchvision's
        ``resize_boxes``) and their (R, 28, 28) mask probabilities (on the device)."""
        resized = [img.shape[1:] for img in prepared]
        hs = self.features(x)
        bboxes, labels, scores = torchvision_fpn.detections(self, hs, x.shape[2:], resized)
        probs = self.mask_head.probs(hs, bboxes, labels)
        ratios = [numpy.asarray(size, numpy.float32) / numpy.asarray(inner, numpy.float32)
                  for size, inner in zip(sizes, resized)]
        bboxes = [bbox * ratio[[1, 0, 1, 0]] for bbox, ratio in zip(bboxes, ratios)]
        return probs, bboxes, labels, scores

    def training_recipe(self, **hyper):
        """How this model trains: torchvision's reference recipe
        (:func:`~.training_recipe.torchvision_mask_rcnn_training_recipe`)."""
        from cvzoo.models.instance_segmentation.mask_rcnn import training_recipe

        return training_recipe.torchvision_mask_rcnn_training_recipe(self, **hyper)

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
            return torchvision_fpn.convert_weights(self, raw, source)
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
