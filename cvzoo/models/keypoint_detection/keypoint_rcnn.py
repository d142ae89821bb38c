"""KeypointRCNNResNet50FPN: torchvision's ``keypointrcnn_resnet50_fpn`` (He et al., "Mask
R-CNN", ICCV 2017, section 5), its pre- and post-processing and COCO weights.

The box part is torchvision's Faster R-CNN ResNet-50 FPN, its parts and functions
(:mod:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn`:
frozen-BN ResNet-50 with eps 0 for the COCO file, ImageNet mean and std, shorter side
800 and longer at most 1333, up to 1000 proposals, NMS at 0.5 per class, 100 detections
per image), here with two classes (the background and the person). Keypoint R-CNN's
settings of the box part are Faster R-CNN's but for the training sizes (torchvision
draws the shorter side from 640 ... 800 in training and uses 800 for inference, as here).
Its detections (in the resized image) are pooled again by the keypoint head
(torchvision's ``KeypointRCNNHeads`` and ``KeypointRCNNPredictor``,
:class:`~.keypoint_head.KeypointHead`: RoIAlign 14 x 14, eight 3 x 3 convolutions of 512,
a deconvolution to 28 x 28 and a bilinear upsampling to 56 x 56 heatmaps, one per
keypoint); each heatmap gives its keypoint and score by torchvision's rule
(:func:`~.heatmap_decoding.heatmaps_to_points`), and the points are scaled back to the
input image with the boxes.

Differences from torchvision: those of the box part (NMS drops a box at IoU >=
``nms_thresh``); torchvision returns (x, y, 1) keypoints, cvzoo (x, y) points; the
point scores are torchvision's ``keypoints_scores`` (heatmap logits, not probabilities).
"""

import os
import typing

import numpy

import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core.serializers import dictionary
from cvzoo.datasets.coco.coco_keypoint_names import coco_keypoint_names
from cvzoo.models import zoo
from cvzoo.models.detection import detector, fpn, torchvision_resnet_fpn, torchvision_transform
from cvzoo.models.detection.faster_rcnn import (
    torchvision_box_head,
    torchvision_fpn,
    torchvision_names,
)
from cvzoo.models.keypoint_detection import heatmap_decoding, keypoint_detector, keypoint_head
from cvzoo.models.weights import pretrained
from cvzoo.models.weights.converters import file_format

COCO_N_POINT = len(coco_keypoint_names)
_KEYPOINT_PREFIXES = ('roi_heads.keypoint_head.', 'roi_heads.keypoint_predictor.')
_LEAF = {'weight': 'W', 'bias': 'b'}


@zoo.register('keypointrcnn_resnet50_fpn', task='keypoint_detection')
class KeypointRCNNResNet50FPN(L.Chain, keypoint_detector.KeypointDetector):
    """torchvision's Keypoint R-CNN ResNet-50 FPN; see the module docstring.

    The parts of torchvision's Faster R-CNN ResNet-50 FPN (``extractor``, ``rpn``,
    ``head``, built by :func:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.build`
    with the settings below) and ``keypoint_head``; the boxes are found by its functions
    (:func:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.detections`).

    Weights keys: ``'coco'``, torchvision's ``KeypointRCNN_ResNet50_FPN_Weights.COCO_V1``
    (COCO 2017 train, person keypoints; keypoint AP 65.0, box AP 54.6 on val2017).

    Args:
        n_fg_class (int or None): classes to detect; None takes the weights' (1, the
            person, also without weights). A number other than the weights' re-makes
            ``head/loc`` and ``head/conf``.
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth or
            cvzoo .npz; its class and keypoint counts are read first) or None for random
            weights.
        n_point (int or None): keypoints per instance; None takes the weights' (17 without
            weights). Another number re-makes ``keypoint_head/deconv``.
        max_detections (int): instances kept per image (torchvision's
            ``box_detections_per_img``, 100).
        min_size, max_size, trainable_backbone_layers, bn_eps, source: as
            :class:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.
            FasterRCNNResNet50FPN`.

    Attributes:
        label_names (tuple of str or None): class names of the loaded weights.
        point_names (tuple of str or None): keypoint names of the loaded weights.

    For example (the weights are downloaded)::

        points, point_scores, labels, scores = KeypointRCNNResNet50FPN(
            pretrained_model='coco').predict([img])
    """

    presets: typing.ClassVar[dict] = torchvision_fpn.PRESETS
    # the box part's settings, those of torchvision's v1 Faster R-CNN
    min_bbox_size = torchvision_fpn.FasterRCNNResNet50FPN.min_bbox_size
    pad_stride = torchvision_fpn.FasterRCNNResNet50FPN.pad_stride
    pretrained_bn_eps = torchvision_fpn.PRETRAINED_BN_EPS
    fpn_bn_eps = None
    rpn_conv_depth = 1
    box_convention = 'continuous'
    label_names = None
    point_names = None
    box_head_class = torchvision_box_head.TorchvisionBoxHead
    keypoint_head_class = keypoint_head.KeypointHead

    def __init__(self, n_fg_class=None, pretrained_model=None, *, n_point=None,
                 max_detections=100, min_size=800, max_size=1333,
                 trainable_backbone_layers=3, bn_eps=None, source=None):
        torchvision_resnet_fpn.check_positive_int('n_fg_class', n_fg_class, optional=True)
        torchvision_resnet_fpn.check_positive_int('n_point', n_point, optional=True)
        torchvision_resnet_fpn.check_positive_int('max_detections', max_detections)
        entry = pretrained.weights_entry(type(self), pretrained_model)
        n_built, n_point_built = _layout(entry, pretrained_model, n_fg_class, n_point)
        super().__init__()
        self._n_point_built = n_point_built  # the keypoint head's, for make_heads
        self.max_detections = max_detections
        if bn_eps is None:
            bn_eps = self.pretrained_bn_eps if pretrained_model else 1e-5
        self.build_box_part(n_built, min_size=min_size, max_size=max_size,
                            trainable_backbone_layers=trainable_backbone_layers, bn_eps=bn_eps)
        pretrained.load_pretrained(self, pretrained_model, n_fg_class, n_built, entry,
                                   self.reset_head, source=source)
        if entry is not None:
            self.point_names = tuple(coco_keypoint_names)
        if n_point is not None and n_point != n_point_built:
            self.reset_points(n_point)

    def build_box_part(self, n_fg_class, **options):
        """Build the box part for ``n_fg_class`` classes and its heads
        (:meth:`make_heads`), without weights: torchvision's ResNet-50 FPN
        (:func:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn.build`; ``options``:
        its ``min_size``, ``max_size``, ``trainable_backbone_layers`` and ``bn_eps``)."""
        # NOTE: without weights: the 'coco' entry would add COCO's ten unused classes;
        # they load afterwards, into both heads
        torchvision_fpn.build(self, n_fg_class, None, **options)

    def make_heads(self, n_class):
        """Build the box head (``box_head_class``) for ``n_class`` classes (background
        included) and the keypoint head (``keypoint_head_class``) on the extractor's
        maps."""
        scales, channels = fpn.FPN_SCALES, self.extractor.channels
        with self.init_scope():
            self.head = self.box_head_class(n_class, scales, channels)
            self.keypoint_head = self.keypoint_head_class(self._n_point_built, scales,
                                                          channels)

    @property
    def n_fg_class(self):
        """Classes the labels take (the box head also scores the background)."""
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
        """Re-make ``head/loc`` and ``head/conf`` for ``n_fg_class`` classes (the label
        names are dropped)."""
        torchvision_fpn.reset_head(self, n_fg_class)

    @property
    def n_point(self):
        """Keypoints per instance."""
        return self.keypoint_head.n_point

    def reset_points(self, n_point):
        """Re-make ``keypoint_head/deconv`` for ``n_point`` keypoints (the keypoint names
        are dropped)."""
        torchvision_resnet_fpn.check_positive_int('n_point', n_point)
        self.keypoint_head.reset_points(n_point)
        self.keypoint_head.to_device(self.device)
        self.point_names = None

    def training_recipe(self, **hyper):
        """How this model trains: torchvision's reference recipe
        (:func:`~cvzoo.models.keypoint_detection.training_recipe.
        keypoint_rcnn_training_recipe`)."""
        from cvzoo.models.keypoint_detection import training_recipe

        return training_recipe.keypoint_rcnn_training_recipe(self, **hyper)

    def detect_points(self, x, sizes, prepared):
        """Per image ``(bboxes, points, point_scores, labels, scores)`` of the batch
        ``x``: the box part's detections and their keypoints (host arrays), boxes and
        points scaled back to each image (as torchvision's ``resize_boxes`` and
        ``resize_keypoints``)."""
        resized = [img.shape[1:] for img in prepared]
        hs = self.features(x)
        bboxes, labels, scores = torchvision_fpn.detections(self, hs, x.shape[2:], resized)
        points, point_scores = self.locate_points(hs, bboxes)
        ratios = [numpy.asarray(size, numpy.float32) / numpy.asarray(inner, numpy.float32)
                  for size, inner in zip(sizes, resized)]
        bboxes = [bbox * ratio[[1, 0, 1, 0]] for bbox, ratio in zip(bboxes, ratios)]
        points = [point * ratio[::-1] for point, ratio in zip(points, ratios)]
        return bboxes, points, point_scores, labels, scores

    def locate_points(self, hs, bboxes):
        """Per image, the (R, K, 2) points and (R, K) scores of the boxes' keypoints.

        Args:
            hs (list of Variable): the FPN's maps of the batch.
            bboxes (list of numpy.ndarray): per image, (R, 4) boxes in input pixels.

        Returns:
            tuple of two lists of NumPy arrays, in input pixels (read back from the device
            in one transfer).
        """
        xp = self.xp
        counts = [len(bbox) for bbox in bboxes]
        roi_indices = numpy.repeat(numpy.arange(len(bboxes), dtype=numpy.int32), counts)
        rois = numpy.concatenate(bboxes).astype(numpy.float32).reshape(-1, 4)
        heatmap = self.keypoint_head(hs, xp.asarray(rois), xp.asarray(roi_indices))
        point, point_score = detector.to_host(*heatmap_decoding.heatmaps_to_points(
            getattr(heatmap, 'array', heatmap), rois))
        splits = numpy.cumsum(counts)[:-1].tolist()
        return numpy.split(point, splits), numpy.split(point_score, splits)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook: torchvision names (``'torchvision'``/``'torch'``)
        or cvzoo's. The box part's keys go as Faster R-CNN's; the keypoint head's
        (``roi_heads.keypoint_head.{2i - 2}``, ``roi_heads.keypoint_predictor.
        kps_score_lowres``) to ``keypoint_head/conv{i}/conv`` and ``keypoint_head/deconv``.

        Raises:
            ValueError: another source.
            cvzoo.errors.WeightLoadError: file keys with no counterpart and model keys
                the file lacks (all named).
        """
        if source not in ('torchvision', 'torch'):
            return torchvision_fpn.convert_weights(self, raw, source)
        expected = set(dictionary.state_arrays(self)) - {'n_unused_class'}
        point_raw = {key: value for key, value in raw.items()
                     if key.startswith(_KEYPOINT_PREFIXES)}
        box_raw = {key: value for key, value in raw.items() if key not in point_raw}
        box_expected = {key for key in expected if not key.startswith('keypoint_head/')}
        arrays, n_unused_class = torchvision_names.convert_torchvision(box_raw, box_expected,
                                                                       source)
        names = {key: keypoint_key(key) for key in point_raw}
        unexpected = sorted(key for key, name in names.items() if name not in expected)
        missing = sorted(expected - box_expected - set(names.values()))
        if unexpected or missing:
            raise errors.WeightLoadError(
                f'Keypoint R-CNN weights ({source} names): keypoint head keys with no '
                f'counterpart in cvzoo: {", ".join(unexpected) or "none"}; model keys '
                f'missing from the file: {", ".join(missing) or "none"}')
        if n_unused_class:
            raise errors.WeightLoadError(
                f'Keypoint R-CNN weights ({source} names): a box predictor of '
                f'{torchvision_names.TORCHVISION_COCO_CLASSES} COCO classes; Keypoint '
                'R-CNN detects persons (2 classes with the background)')
        arrays.update({names[key]: value for key, value in point_raw.items()})
        arrays['n_unused_class'] = numpy.asarray(0)
        return arrays


def keypoint_key(key):
    """cvzoo name of a torchvision keypoint head key, or None when it is not one.

    >>> keypoint_key('roi_heads.keypoint_head.14.bias')
    'keypoint_head/conv8/conv/b'
    >>> keypoint_key('roi_heads.keypoint_predictor.kps_score_lowres.weight')
    'keypoint_head/deconv/W'
    """
    parts = key.split('.')
    leaf = _LEAF.get(parts[-1])
    if leaf is None or len(parts) != 4:
        return None
    if parts[1] == 'keypoint_predictor' and parts[2] == 'kps_score_lowres':
        return f'keypoint_head/deconv/{leaf}'
    if parts[1] == 'keypoint_head' and parts[2].isdigit() and int(parts[2]) % 2 == 0:
        return f'keypoint_head/conv{int(parts[2]) // 2 + 1}/conv/{leaf}'
    return None


def _layout(entry, pretrained_model, n_fg_class, n_point):
    """(n_fg_class, n_point) the heads are built with: the entry's, a local file's, or
    those asked for (1 and 17 by default)."""
    if entry is not None:
        return entry.n_class, COCO_N_POINT
    default = (n_fg_class or 1, n_point or COCO_N_POINT)
    if not pretrained_model or not os.path.isfile(pretrained_model):
        return default
    raw = {key.removeprefix('/'): value
           for key, value in file_format.read_weight_file(pretrained_model).items()}
    n_class = [raw[key].shape[0] for key in ('roi_heads.box_predictor.cls_score.bias',
                                             'head/conf/b') if key in raw]
    n_points = [raw[key].shape[0] for key in (
        'roi_heads.keypoint_predictor.kps_score_lowres.bias', 'keypoint_head/deconv/b')
        if key in raw]
    return (n_class[0] - 1 if n_class else default[0],
            n_points[0] if n_points else default[1])


_BOX_ENTRY = torchvision_fpn.FasterRCNNResNet50FPN.weights['coco']
KeypointRCNNResNet50FPN.weights = {
    'coco': zoo.Weights(
        url='https://download.pytorch.org/models/keypointrcnn_resnet50_fpn_coco-fc266e95.pth',
        sha256='fc266e95', source_format='torch_pth', n_class=1, label_names=('person',),
        preset=_BOX_ENTRY.preset,
        reported=zoo.Score('keypoint_map_coco', 0.650, 'coco_val2017',
                           'torchvision docs, KeypointRCNN_ResNet50_FPN_Weights.COCO_V1 '
                           '(kp_map 65.0, box_map 54.6, COCO val2017)'),
        notes="torchvision's Keypoint R-CNN ResNet-50 FPN (FrozenBatchNorm eps 0), the 17 "
              "COCO person keypoints; box AP 54.6. Points are decoded by torchvision's "
              'rule (bicubic resize of each heatmap to its box, first maximum at the pixel '
              'centre); min size 800, max size 1333, padding to multiples of 32.',
        convert_from='torchvision', box_convention='continuous', license='BSD-3-Clause'),
}
