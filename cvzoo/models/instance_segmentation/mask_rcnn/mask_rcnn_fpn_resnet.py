"""MaskRCNNFPNResNet50 and MaskRCNNFPNResNet101 (He et al., "Mask R-CNN", ICCV 2017) with
ChainerCV's names, settings and COCO weights.

The box part is ChainerCV's Faster R-CNN FPN, its parts and functions
(:mod:`~cvzoo.models.detection.faster_rcnn.fpn.faster_rcnn_fpn_resnet`:
ResNet 'he' backbone, mean (123.15, 115.90, 103.06) without std, shorter side 800 and
longer at most 1333, inputs padded to multiples of 32). Its detections (per class at or
above ``score_thresh``, NMS at ``nms_thresh``, no cap on their number) are scaled to the
input and pooled again by the :class:`~.mask_head.MaskHead`; the sigmoid of each
detection's own class channel (28 x 28) is pasted into the image at its box
(:func:`~cvzoo.models.instance_segmentation.mask_paste.paste_masks`, ChainerCV's rule).

Differences from ChainerCV: Pillow's bilinear resize of the input (the weights were
trained with OpenCV's), instances sorted by decreasing score instead of by class.
"""

import typing

import numpy

import cvzoo.core.links as L
from cvzoo.core.serializers import dictionary
from cvzoo.datasets.coco.coco_label_names import coco_instance_segmentation_label_names
from cvzoo.models import zoo
from cvzoo.models.detection import box_coding, fpn
from cvzoo.models.detection.faster_rcnn import faster_rcnn, faster_rcnn_vgg
from cvzoo.models.detection.faster_rcnn.fpn import faster_rcnn_fpn_resnet as fpn_resnet
from cvzoo.models.instance_segmentation import instance_segmenter
from cvzoo.models.instance_segmentation.mask_rcnn import mask_head
from cvzoo.models.weights import pretrained


class MaskRCNNFPNResNet(L.Chain, instance_segmenter.InstanceSegmenter):
    """Mask R-CNN with FPN on a ResNet; see the module docstring.

    The parts of ChainerCV's Faster R-CNN FPN (``extractor``, ``rpn``, ``head``:
    :func:`~cvzoo.models.detection.faster_rcnn.fpn.faster_rcnn_fpn_resnet.make_parts`)
    and ``mask_head``; the boxes are found by Faster R-CNN's functions
    (:func:`~cvzoo.models.detection.faster_rcnn.faster_rcnn.detections`), with its
    settings below.

    Args:
        n_layer (int or None): 50 or 101 (None: a subclass's parts, :meth:`make_parts`).
        n_fg_class (int or None): classes to segment; None takes the weights' (80
            without weights). A different number re-makes ``head/loc``, ``head/conf``
            and ``mask_head/seg``.
        pretrained_model (str or None): ``'coco'``, ``'imagenet'`` (the backbone only),
            a local file (cvzoo or ChainerCV .npz) or None for random weights.
        min_size, max_size (int): the resize rule (800 and 1333).
        source (str or None): names of a local file: 'cvzoo' (default) or 'chainercv'.

    Attributes:
        label_names (tuple of str or None): class names of the loaded weights.
        box_convention (str): how the boxes the weights learned end ('continuous').
    """

    presets: typing.ClassVar[dict] = fpn_resnet.FPN_PRESETS
    # the box part's rules, those of FasterRCNNFPNResNet
    pad_stride = fpn_resnet.FasterRCNNFPNResNet.pad_stride
    exp_clip = box_coding.EXP_CLIP
    loc_normalize_mean = faster_rcnn.LOC_NORMALIZE_MEAN
    loc_normalize_std = faster_rcnn.LOC_NORMALIZE_STD
    inclusive_score_thresh = True  # ChainerCV's FPN keeps scores at score_thresh
    later_candidate_wins_ties = False
    max_detections = None
    class_bias_keys = fpn_resnet.FasterRCNNFPNResNet.class_bias_keys
    box_convention = 'continuous'
    label_names = None

    def __init__(self, n_layer, n_fg_class=None, pretrained_model=None, *, min_size=800,
                 max_size=1333, source=None):
        entry, n_built = faster_rcnn_vgg.settle_n_fg_class(type(self), pretrained_model,
                                                           n_fg_class, 80)
        super().__init__()
        with self.init_scope():
            self.extractor, self.rpn, self.head, self.mask_head = self.make_parts(
                n_layer, n_built + 1)
        self.mean = numpy.asarray(fpn_resnet.RESNET_MEAN, numpy.float32).reshape(-1, 1, 1)
        self.min_size, self.max_size = min_size, max_size
        self.use_preset('visualize')
        pretrained.load_pretrained(self, pretrained_model, n_fg_class, n_built, entry,
                                   self.reset_head, source=source)

    def make_parts(self, n_layer, n_class):
        """``(extractor, rpn, head, mask_head)`` for ``n_class`` classes (background
        included): ChainerCV's FPN R-CNN parts on a ResNet of ``n_layer`` layers
        (:func:`~cvzoo.models.detection.faster_rcnn.fpn.faster_rcnn_fpn_resnet.
        make_parts`) and a :class:`~.mask_head.MaskHead`."""
        return (*fpn_resnet.make_parts(n_layer, n_class),
                mask_head.MaskHead(n_class, fpn.FPN_SCALES))

    @property
    def n_fg_class(self):
        """Foreground classes (the heads also score the background)."""
        return self.head.n_class - 1

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> resized and mean subtracted, as the box part's."""
        return faster_rcnn.prepare(self, img)

    def pad_batch(self, prepared):
        """Prepared images -> (B, 3, H, W) NumPy batch zero-padded to multiples of 32."""
        return faster_rcnn.pad_batch(self, prepared)

    def input_scales(self, sizes, prepared):
        """Per image, input pixels per image pixel (the exact resize factor)."""
        return fpn_resnet.input_scales(self, sizes)

    def reset_head(self, n_fg_class):
        """Re-make the class-dependent layers of the box and mask heads."""
        faster_rcnn.reset_head(self, n_fg_class)
        self.mask_head.reset_classes(n_fg_class + 1)
        self.mask_head.to_device(self.device)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook, the box part's
        (:func:`~cvzoo.models.detection.faster_rcnn.fpn.faster_rcnn_fpn_resnet.
        convert_weights`): ChainerCV's files name the mask head as cvzoo does."""
        return fpn_resnet.convert_weights(self, raw, source)

    def training_recipe(self, **hyper):
        """How this model trains: ChainerCV's FPN recipe
        (:func:`~.training_recipe.chainercv_mask_rcnn_training_recipe`)."""
        from cvzoo.models.instance_segmentation.mask_rcnn import training_recipe

        return training_recipe.chainercv_mask_rcnn_training_recipe(self, **hyper)

    def segment(self, x, sizes, prepared):
        """Per image ``(probs, bboxes, labels, scores)`` of the batch ``x``: the
        detections of the box part (host arrays) and their (R, 28, 28) mask
        probabilities (on the device)."""
        scales = self.input_scales(sizes, prepared)
        hs = self.extractor(x)
        bboxes, labels, scores = faster_rcnn.detections(self, hs, x.shape[2:], sizes, scales)
        rois = [bbox * numpy.float32(scale) for bbox, scale in zip(bboxes, scales)]
        return self.mask_head.probs(hs, rois, labels), bboxes, labels, scores

    # this model's parameters and persistent arrays, {path without '/': NumPy}
    state_arrays = dictionary.state_arrays


@zoo.register('mask_rcnn_fpn_resnet50', task='instance_segmentation')
class MaskRCNNFPNResNet50(MaskRCNNFPNResNet):
    """Mask R-CNN FPN on ResNet-50. Weights keys: ``'coco'`` (COCO 2017 train, trained by
    ChainerCV; mask mmAP 34.2 on val2017), ``'imagenet'`` (ResNet-50 'he' backbone).
    Other arguments as :class:`MaskRCNNFPNResNet`.

    For example (the weights are downloaded)::

        model = MaskRCNNFPNResNet50(pretrained_model='coco')
        masks, labels, scores = model.predict([img])
    """

    def __init__(self, n_fg_class=None, pretrained_model=None, **kwargs):
        super().__init__(50, n_fg_class, pretrained_model, **kwargs)


@zoo.register('mask_rcnn_fpn_resnet101', task='instance_segmentation')
class MaskRCNNFPNResNet101(MaskRCNNFPNResNet):
    """Mask R-CNN FPN on ResNet-101. Weights keys: ``'coco'`` (mask mmAP 36.0 on
    val2017), ``'imagenet'``. Other arguments as :class:`MaskRCNNFPNResNet`."""

    def __init__(self, n_fg_class=None, pretrained_model=None, **kwargs):
        super().__init__(101, n_fg_class, pretrained_model, **kwargs)


def _weights(n_layer, mask_percent, box_percent):
    backbone = fpn_resnet.FasterRCNNFPNResNet50 if n_layer == 50 else \
        fpn_resnet.FasterRCNNFPNResNet101
    coco = zoo.Weights(
        url=f'https://chainercv-models.preferred.jp/mask_rcnn_fpn_resnet{n_layer}_coco_trained_'
            '2019_03_15.npz',
        sha256=zoo.UNPUBLISHED, source_format='chainercv_npz', n_class=80,
        label_names=tuple(coco_instance_segmentation_label_names),
        preset=backbone.weights['coco'].preset,
        reported=zoo.Score('mask_map_coco', mask_percent / 100, 'coco_val2017',
                           'ChainerCV examples/fpn/README.md (mask mmAP, COCO val2017)'),
        notes=f'Box mmAP {box_percent} on COCO val2017 (ChainerCV). Trained by ChainerCV '
              'with y-first boxes; cvzoo permutes the offset layers. ChainerCV resizes '
              'with OpenCV, cvzoo with Pillow.',
        convert_from='chainercv', box_convention='continuous', license='MIT (ChainerCV)')
    return {'coco': coco, 'imagenet': backbone.weights['imagenet']}


MaskRCNNFPNResNet50.weights = _weights(50, 34.2, 38.0)
MaskRCNNFPNResNet101.weights = _weights(101, 36.0, 40.4)
