"""FasterRCNNResNet50FPN: torchvision's ``fasterrcnn_resnet50_fpn`` (v1; Ren et al., NeurIPS
2015, with the FPN of Lin et al., CVPR 2017), its preprocessing, post-processing and
COCO weights.

The network: a ResNet-50 ('fb' arch, frozen BN) whose C2 ... C5 feed an FPN (P2 ... P5,
and P6 subsampled from P5, torchvision's ``LastLevelMaxPool``); the RPN of
:mod:`torchvision_rpn` proposes up to 1000 RoIs per image; the head of
:mod:`torchvision_box_head` pools them and scores n_fg_class + 1 classes (softmax,
background first; plus ``n_unused_class``, see Labels) with per-class offsets (box coder
weights (10, 10, 5, 5)).

predict(): the image is normalised (ImageNet mean and std), resized (bilinear, no
antialias; shorter side ``min_size`` unless the longer would pass ``max_size``) and the
batch zero-padded to multiples of 32, as torchvision's ``GeneralizedRCNNTransform`` (the
code RetinaNet shares, :mod:`~cvzoo.models.detection.torchvision_transform`); each RoI's
per-class boxes are decoded (dw, dh clipped at log(1000 / 16)) and clipped to the resized
image; the (box, class) pairs scoring above ``score_thresh`` with both sides >= 0.01 go
through NMS per class at ``nms_thresh``; the ``max_detections`` (100) best of each image
are kept and scaled back to the input image (torchvision's ``postprocess_detections`` and
``postprocess``). The 'evaluate' preset is torchvision's setting (0.05, 0.5); 'visualize'
(0.7, 0.5) returns the subset of those detections scoring above 0.7.

Labels: torchvision's COCO predictor scores 91 classes indexed by COCO category id, ten
of them 'N/A'. cvzoo's labels are the 80 real classes; the conversion reorders the
predictor's rows to the background, the 80 labels and the ten unused ids, which stay at
the end (``n_unused_class``) because the softmax of the 80 depends on them too: the
scores are torchvision's. Their boxes are never returned. Re-making the predictor for
another ``n_fg_class`` drops them.

Differences from torchvision: NMS drops a box at IoU >= nms_thresh (torchvision: >); BN
is frozen also without pretrained weights; ``head/loc`` and ``head/conf`` start as
N(0, 0.001) and N(0, 0.01) (torchvision: uniform).
"""

import os
import typing

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import config
from cvzoo.core.serializers import dictionary
from cvzoo.datasets.coco.coco_label_names import coco_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.common import imagenet_presets
from cvzoo.models.detection import (
    box_coding,
    detector,
    fpn,
    torchvision_resnet_fpn,
)
from cvzoo.models.detection.faster_rcnn import (
    torchvision_box_head,
    torchvision_names,
    torchvision_rpn,
)
from cvzoo.models.weights import pretrained
from cvzoo.models.weights.converters import file_format

PRESETS = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.5},
           'evaluate': {'score_thresh': 0.05, 'nms_thresh': 0.5}}
BOX_CODER_WEIGHTS = (10.0, 10.0, 5.0, 5.0)
PRETRAINED_BN_EPS = torchvision_resnet_fpn.PRETRAINED_BN_EPS


@zoo.register('fasterrcnn_resnet50_fpn', task='detection')
class FasterRCNNResNet50FPN(L.Chain, torchvision_resnet_fpn.TorchvisionResNetFPNDetector):
    """torchvision's Faster R-CNN ResNet-50 FPN; see the module docstring.

    Weights keys: ``'coco'``, torchvision's ``FasterRCNN_ResNet50_FPN_Weights.COCO_V1``
    (COCO 2017 train; box AP 37.0 on val2017).

    Args:
        n_fg_class (int or None): classes to detect; None takes the weights' (80 without
            weights). A number other than the weights' re-makes ``head/loc`` and
            ``head/conf`` (without unused classes).
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth or
            cvzoo .npz; its predictor's class counts are read first) or None for random
            weights.
        min_size, max_size (int): the resize rule (800 and 1333).
        trainable_backbone_layers (int): 0 ... 5, ResNet's stages left trainable from the
            top (torchvision's default 3: res3 ... res5); BN is always frozen.
        bn_eps (float or None): BN epsilon (> 0); None is ``PRETRAINED_BN_EPS`` (as 0,
            which torchvision sets for its COCO weights) with pretrained weights and 1e-5
            (torchvision's BatchNorm2d) otherwise.
        source (str or None): names of a local file ('torchvision' or 'cvzoo').

    Attributes:
        n_unused_class (int): classes at the end of the predictor that enter the softmax
            but are no label (10 with torchvision's COCO predictor, else 0).
        label_names (tuple of str or None): class names of the loaded weights.

    Example (downloads the COCO weights)::

        bboxes, labels, scores = FasterRCNNResNet50FPN(pretrained_model='coco').predict([img])
    """

    presets: typing.ClassVar[dict] = PRESETS
    max_detections = 100
    min_bbox_size = 1e-2
    pad_stride = 32
    label_names = None
    # the backbone's BN epsilon with pretrained weights (torchvision's v1 COCO files: 0)
    pretrained_bn_eps = PRETRAINED_BN_EPS
    # torchvision key -> cvzoo key (None: dropped); KeyError for a key of another model
    map_torchvision_key = staticmethod(torchvision_names.map_key)
    fpn_bn_eps = None  # the FPN's layers: biased convolutions, no BN (fpn.FPN's bn_eps)
    rpn_conv_depth = 1  # 3x3 convolutions of the RPN's head

    def __init__(self, n_fg_class=None, pretrained_model=None, *, min_size=800, max_size=1333,
                 trainable_backbone_layers=3, bn_eps=None, source=None):
        super().__init__()
        build(self, n_fg_class, pretrained_model, min_size=min_size, max_size=max_size,
              trainable_backbone_layers=trainable_backbone_layers, bn_eps=bn_eps,
              source=source)

    def make_box_head(self, n_class):
        """The box head (``head``) for ``n_class`` classes; v1's is ``TwoMLPHead``."""
        return torchvision_box_head.TorchvisionBoxHead(n_class, fpn.FPN_SCALES)

    def make_heads(self, n_class):
        """Build the RoI heads for ``n_class`` classes (background and unused ones
        included), before weights load: the box head here; Mask R-CNN adds its mask head."""
        with self.init_scope():
            self.head = self.make_box_head(n_class)

    @property
    def n_fg_class(self):
        """Classes the labels take (the head also scores the background and unused ones)."""
        return n_fg_class(self)

    def reset_head(self, n_fg_class):
        """Re-make ``head/loc`` and ``head/conf`` for ``n_fg_class`` classes (no unused
        classes; the label names are dropped)."""
        reset_head(self, n_fg_class)

    def training_recipe(self, **hyper):
        """How this detector trains: a ``TrainingRecipe``,
        ``torchvision_faster_rcnn_training_recipe`` of
        :mod:`~cvzoo.models.detection.faster_rcnn.training_recipe`."""
        from cvzoo.models.detection.faster_rcnn import training_recipe
        return training_recipe.torchvision_faster_rcnn_training_recipe(self, **hyper)

    def features(self, x):
        """(B, 3, H, W) prepared batch, H and W multiples of 32 -> P2 ... P6 Variables
        (:func:`features`)."""
        return features(self, x)

    def forward(self, x, sizes=None):
        """Head outputs of a prepared batch.

        Args:
            x (array): (B, 3, H, W) prepared batch, H and W multiples of 32.
            sizes (list of pairs of int or None): each image's (H, W) before padding
                (default: the batch's).

        Returns:
            tuple: ``locs`` (R, n_class * 4) and ``confs`` (R, n_class) Variables, ``rois``
            (R, 4) and ``roi_indices`` (R,) arrays (the RPN's proposals).
        """
        sizes = [tuple(x.shape[2:])] * len(x) if sizes is None else sizes
        return run_heads(self, self.features(x), x.shape[2:], sizes)

    def decode(self, outputs, sizes):
        """Per-class boxes and scores of every RoI of a batch, on the device.

        Args:
            outputs: what :meth:`forward` returns.
            sizes (list of pairs of int): each resized image's (H', W').

        Returns:
            tuple: ``bbox`` (R, n_fg_class, 4) clipped to each resized image, ``score``
            (R, n_fg_class) softmax probabilities over all the head's classes (the
            background's and unused classes' columns dropped), ``roi_indices`` (R,).
        """
        return decode(self, outputs, sizes)

    def suppress(self, bbox, score, roi_indices, n_image):
        """Threshold, small-box removal, per-image and per-class NMS and the
        ``max_detections`` best of each image, on the device.

        Returns:
            tuple of three lists (one entry per image) of NumPy arrays: (R, 4) float32
            boxes in the resized image's pixels, (R,) int32 labels, (R,) float32 scores
            by decreasing score.
        """
        return suppress(self, bbox, score, roi_indices, n_image)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook (:func:`convert_weights`)."""
        return convert_weights(self, raw, source)


# The rules of torchvision's ResNet-50 FPN R-CNNs, as functions of a ``model`` Chain that
# holds their parts (``extractor``, ``rpn``, ``head``) and settings (the class attributes
# of :class:`FasterRCNNResNet50FPN`: ``fpn_bn_eps``, ``rpn_conv_depth``,
# ``pretrained_bn_eps``, ``map_torchvision_key``, ``make_heads``, ``min_bbox_size``,
# ``max_detections`` and the thresholds): FasterRCNNResNet50FPN calls them, and so do
# the models that hold the same parts with a further head (Mask and Keypoint R-CNN).

def build(model, n_fg_class=None, pretrained_model=None, *, min_size=800, max_size=1333,
          trainable_backbone_layers=3, bn_eps=None, source=None):
    """Give the Chain ``model`` its parts, settings and weights (the arguments of
    :class:`FasterRCNNResNet50FPN`): the FPN on a ResNet-50, the RPN, the heads of
    ``model.make_heads(n_class)`` (the background and unused classes included), the BN
    epsilon, the weights and the frozen backbone layers.

    Raises:
        ValueError: ``n_fg_class`` or ``trainable_backbone_layers`` out of range (named).
    """
    torchvision_resnet_fpn.check_positive_int('n_fg_class', n_fg_class, optional=True)
    if trainable_backbone_layers not in range(6):
        raise ValueError(f'trainable_backbone_layers: expected an int in 0 ... 5, got '
                         f'{trainable_backbone_layers!r}')
    entry, n_built = pretrained.settle_n_class(model, pretrained_model, n_fg_class, 80)
    n_unused_class = 0
    if entry is not None:
        n_unused_class = torchvision_names.N_COCO_UNUSED_CLASS
    elif pretrained_model:
        layout = _file_layout(pretrained_model)
        if layout is not None:
            n_built, n_unused_class = layout
    extractor = fpn.FPN(torchvision_resnet_fpn.make_resnet50_base(
        bool(pretrained_model), ('res2', 'res3', 'res4', 'res5')),
        (256, 512, 1024, 2048), fpn.FPN_SCALES, bn_eps=model.fpn_bn_eps)
    assemble(model, extractor, torchvision_rpn.TorchvisionRPN(conv_depth=model.rpn_conv_depth),
             n_built + 1 + n_unused_class, n_unused_class, min_size, max_size)
    torchvision_resnet_fpn.set_bn_eps(model.extractor.base, (
        model.pretrained_bn_eps if pretrained_model else 1e-5) if bn_eps is None else bn_eps)
    pretrained.load_pretrained(model, pretrained_model, n_fg_class, n_built, entry,
                               model.reset_head, source=source)
    torchvision_resnet_fpn.freeze(model.extractor.base, trainable_backbone_layers)


def assemble(model, extractor, rpn, n_class, n_unused_class, min_size, max_size):
    """Give the Chain ``model`` an ``extractor`` (an FPN), an ``rpn``, the heads of
    ``model.make_heads(n_class)`` (background and ``n_unused_class`` unused classes
    included), the resize rule and the 'visualize' preset: what :func:`build` and the
    R-CNNs on other backbones (cvzoo's tiny ones) share."""
    with model.init_scope():
        model.extractor = extractor
        model.rpn = rpn
    model.make_heads(n_class)
    model.add_persistent('n_unused_class', n_unused_class)
    model.min_size, model.max_size = min_size, max_size
    model.use_preset('visualize')


def n_fg_class(model):
    """Classes the labels take (the head also scores the background and unused ones)."""
    return model.head.n_class - 1 - int(model.n_unused_class)


def reset_head(model, n_fg_class):
    """Re-make ``head/loc`` and ``head/conf`` for ``n_fg_class`` classes (no unused
    classes; the label names are dropped)."""
    torchvision_resnet_fpn.check_positive_int('n_fg_class', n_fg_class)
    model.head.reset_classes(n_fg_class + 1)
    model.head.to_device(model.device)
    model.n_unused_class = 0
    model.label_names = None


def features(model, x):
    """(B, 3, H, W) prepared batch, H and W multiples of 32 -> P2 ... P6 Variables.

    The ResNet runs in test mode also while training (its BN frozen, torchvision's
    FrozenBatchNorm2d); the FPN in the current mode (v2's FPN has BN that trains)."""
    with config.using_config('train', False):
        hs = model.extractor.base(x)
    return model.extractor.pyramid(hs)


def run_heads(model, hs, img_size, sizes):
    """The RPN and the box head on the FPN's maps ``hs`` of a batch of ``img_size``
    (H, W), its images of ``sizes`` before padding: ``locs``, ``confs``, ``rois`` and
    ``roi_indices`` (what :meth:`FasterRCNNResNet50FPN.forward` returns)."""
    _, _, rois, roi_indices, _ = model.rpn(hs, img_size, sizes)
    locs, confs = model.head(hs, rois, roi_indices)
    return locs, confs, rois, roi_indices


def detections(model, hs, img_size, sizes):
    """Per image ``(bboxes, labels, scores)`` (host arrays, boxes in the resized images'
    pixels) of the FPN's maps ``hs``: :func:`run_heads`, :func:`decode` and
    :func:`suppress`."""
    outputs = run_heads(model, hs, img_size, sizes)
    return suppress(model, *decode(model, outputs, sizes), len(sizes))


def decode(model, outputs, sizes):
    """Per-class boxes and scores of every RoI of a batch, on the device
    (:meth:`FasterRCNNResNet50FPN.decode`)."""
    locs, confs, rois, roi_indices = outputs
    xp = model.xp
    labels = slice(1, 1 + model.n_fg_class)
    loc = locs.array.reshape(len(rois), model.head.n_class, 4)[:, labels]
    bbox = box_coding.decode(rois[:, None, :], loc, BOX_CODER_WEIGHTS,
                             exp_clip=box_coding.EXP_CLIP)
    limits = xp.asarray([[W, H, W, H] for H, W in sizes], numpy.float32)
    bbox = xp.clip(bbox, 0, limits[roi_indices][:, None, :])
    score = F.softmax(confs, axis=1).array[:, labels]
    return bbox, score, roi_indices


def suppress(model, bbox, score, roi_indices, n_image):
    """Threshold, small-box removal, per-image and per-class NMS and the
    ``max_detections`` best of each image (:meth:`FasterRCNNResNet50FPN.suppress`)."""
    xp = model.xp
    large = ((bbox[..., 2:] - bbox[..., :2]) >= model.min_bbox_size).all(axis=-1)
    roi, label = xp.nonzero((score > model.score_thresh) & large)
    bbox, score = bbox[roi, label], score[roi, label]
    image_index = roi_indices[roi]
    return detector.per_image_detections(image_index, bbox, score, label, n_image,
                                         model.n_fg_class, model.nms_thresh,
                                         model.max_detections)


def convert_weights(model, raw, source):
    """The zoo's conversion hook: torchvision names (``'torchvision'``/``'torch'``)
    or cvzoo's; a 91-class torchvision predictor is reordered (see ``n_unused_class``).

    Raises:
        ValueError: another source.
        cvzoo.errors.WeightLoadError: file keys with no counterpart and model keys
            the file lacks (all named).
    """
    if source in ('torchvision', 'torch'):
        expected = set(dictionary.state_arrays(model)) - {'n_unused_class'}
        arrays, n_unused_class = torchvision_names.convert_torchvision(
            raw, expected, source, map_key=model.map_torchvision_key)
        arrays['n_unused_class'] = numpy.asarray(n_unused_class)
        return arrays
    if source == 'cvzoo':
        return {key.removeprefix('/'): value for key, value in raw.items()}
    raise ValueError(f"source: expected 'torchvision', 'torch' or 'cvzoo' for Faster "
                     f'R-CNN FPN weights, got {source!r}')


def _file_layout(path):
    """(n_fg_class, n_unused_class) of a local weight file's predictor (torchvision's
    91 COCO classes are the 80 labels and 10 unused ones); None when it is not a readable
    file or has no predictor."""
    if not os.path.isfile(path):
        return None
    raw = {key.removeprefix('/'): value
           for key, value in file_format.read_weight_file(path).items()}
    if 'roi_heads.box_predictor.cls_score.bias' in raw:
        n_class = raw['roi_heads.box_predictor.cls_score.bias'].shape[0]
        n_unused_class = torchvision_names.N_COCO_UNUSED_CLASS \
            if n_class == torchvision_names.TORCHVISION_COCO_CLASSES else 0
    elif 'head/conf/b' in raw:
        n_class = raw['head/conf/b'].shape[0]
        n_unused_class = int(raw.get('n_unused_class', 0))
    else:
        return None
    return n_class - 1 - n_unused_class, n_unused_class


FasterRCNNResNet50FPN.weights = {
    'coco': zoo.Weights(
        url='https://download.pytorch.org/models/fasterrcnn_resnet50_fpn_coco-258fb6c6.pth',
        sha256='258fb6c6', source_format='torch_pth', n_class=80,
        label_names=tuple(coco_bbox_label_names),
        preset=zoo.Preset(size=800, mean=imagenet_presets.IMAGENET_MEAN,
                          std=imagenet_presets.IMAGENET_STD,
                          interpolation='bilinear', resize_backend='cvzoo'),
        reported=zoo.Score('map_coco', 0.370, 'coco_val2017',
                           'torchvision docs, FasterRCNN_ResNet50_FPN_Weights.COCO_V1 '
                           '(box_map 37.0, COCO val2017)'),
        notes="torchvision's v1 Faster R-CNN ResNet-50 FPN (FrozenBatchNorm eps 0). Its "
              '91-class predictor (COCO category ids) is reordered to the background, the '
              "80 real classes in cvzoo's order and the ten unused ids, which stay in the "
              "softmax; torch resizes with interpolate (bilinear, no antialias), which "
              "cvzoo's resize_images reproduces; min size 800, max size 1333, padding to "
              'multiples of 32.',
        convert_from='torchvision', box_convention='continuous', license='BSD-3-Clause'),
}
