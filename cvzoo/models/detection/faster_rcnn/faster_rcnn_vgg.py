"""FasterRCNNVGG16 (Ren et al., "Faster R-CNN: Towards Real-Time Object Detection with
Region Proposal Networks", NeurIPS 2015), with ChainerCV's layer names and settings.

VGG16's convolutions up to conv5_3 (stride 16; the 2x2 max poolings keep Chainer's
``cover_all=True``, so odd sides round up as in ChainerCV), an RPN with 9 anchors
(scales 8, 16, 32 times 16 pixels, ratios 0.5, 1, 2), 7x7 RoI max pooling at 1/16 and
VGG16's fc6 and fc7 as the RoI head, which predicts per class offsets and scores.
"""

import os

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.datasets.imagenet import imagenet_label_names
from cvzoo.datasets.voc.voc_label_names import voc_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.classification.vgg import vgg16
from cvzoo.models.common import conv2d_activ
from cvzoo.models.detection.faster_rcnn import faster_rcnn, region_proposal_network
from cvzoo.models.weights import pretrained
from cvzoo.models.weights.converters import file_format

# RGB, ChainerCV's mean of this detector (py-faster-rcnn's PIXEL_MEANS 102.9801,
# 115.9465, 122.7717 in BGR), not the 123.152, 115.903, 103.063 of its VGG16 classifier
VGG16_MEAN = (122.7717, 115.9465, 102.9801)
BACKBONE_KEYS = ('imagenet',)
_POOL_AFTER = ('conv1_2', 'conv2_2', 'conv3_3', 'conv4_3')
_LOC_KEYS = ('rpn/loc/W', 'rpn/loc/b', 'head/cls_loc/W', 'head/cls_loc/b')


class VGG16Extractor(L.Chain):
    """VGG16's 13 convolutions (ReLU after each), max pooling after stages 1-4.

    Output: (B, 512, ceil(H / 16), ceil(W / 16)), ``conv5_3`` after its ReLU.
    """

    def __init__(self, initialW=None):
        super().__init__()
        in_channels = 3
        with self.init_scope():
            for name in vgg16.CONV_NAMES:
                channels = {1: 64, 2: 128, 3: 256}.get(int(name[4]), 512)
                setattr(self, name, conv2d_activ.Conv2DActiv(in_channels, channels, 3, 1, 1,
                                                             initialW=initialW))
                in_channels = channels

    def forward(self, x):
        """(B, 3, H, W) -> (B, 512, H / 16, W / 16)."""
        h = x
        for name in vgg16.CONV_NAMES:
            h = self[name](h)
            if name in _POOL_AFTER:
                h = F.max_pooling_2d(h, 2, 2, cover_all=True)
        return h


class VGG16RoIHead(L.Chain):
    """RoI max pooling, fc6 and fc7 (ReLU), then per-class offsets and class scores.

    Args:
        n_class (int): classes including the background.
        roi_size (int): side of the pooled RoI.
        spatial_scale (float): feature pixels per input pixel.
        vgg_initialW: initializer of fc6 and fc7.
    """

    def __init__(self, n_class, roi_size=7, spatial_scale=1 / 16, vgg_initialW=None):
        super().__init__()
        self.n_class, self.roi_size, self.spatial_scale = n_class, roi_size, spatial_scale
        with self.init_scope():
            self.fc6 = L.Linear(512 * roi_size * roi_size, 4096, initialW=vgg_initialW)
            self.fc7 = L.Linear(4096, 4096, initialW=vgg_initialW)
        self.reset_classes(n_class)

    def reset_classes(self, n_class):
        """(Re-)make ``cls_loc`` (N(0, 0.001)) and ``score`` (N(0, 0.01)) for n_class."""
        for name in ('cls_loc', 'score'):
            if hasattr(self, name):
                delattr(self, name)
        self.n_class = n_class
        with self.init_scope():
            self.cls_loc = L.Linear(4096, n_class * 4, initialW=initializers.Normal(0.001))
            self.score = L.Linear(4096, n_class, initialW=initializers.Normal(0.01))

    def forward(self, x, rois, roi_indices):
        """(B, 512, H, W) features and (R, 4) RoIs in input pixels -> (R, n_class * 4)
        offsets and (R, n_class) class scores."""
        pool = F.roi_pooling_2d(x, rois, roi_indices, self.roi_size, self.spatial_scale)
        h = F.relu(self.fc6(F.reshape(pool, (len(rois), -1))))
        h = F.relu(self.fc7(h))
        return self.cls_loc(h), self.score(h)


@zoo.register('faster_rcnn_vgg16', task='detection')
class FasterRCNNVGG16(faster_rcnn.FasterRCNN):
    """Faster R-CNN on VGG16.

    Weights keys: ``'voc07'`` (VOC2007 trainval; ChainerCV reports VOC2007 test mAP 70.6)
    and ``'voc0712'`` (VOC2007+2012 trainval; 74.7), both trained by ChainerCV;
    ``'imagenet'`` (VGG16's convolutions and fc6/fc7 only, for training).

    Args:
        n_fg_class (int or None): classes to detect; None takes the weights' (20 without
            weights). A different number re-makes ``cls_loc`` and ``score``.
        pretrained_model (str or None): a weights key, a local file (cvzoo or ChainerCV
            .npz) or None for random weights.
        min_size, max_size (int): the resize rule (600 and 1000).
        source (str or None): names of a local file: 'cvzoo' (default) or 'chainercv'
            (y-first offset layers; the names alone cannot tell them apart).
        ratios, anchor_scales: of the RPN's anchors.
        proposal_creator_params (dict or None): arguments of the ProposalCreator.

    Differences from ChainerCV: see :mod:`faster_rcnn`.

    Example (downloads the weights)::

        model = FasterRCNNVGG16(pretrained_model='voc07')
    """

    feat_stride = 16
    later_candidate_wins_ties = True
    class_bias_keys = ('head/score/b',)

    def __init__(self, n_fg_class=None, pretrained_model=None, *, min_size=600,
                 max_size=1000, ratios=(0.5, 1, 2), anchor_scales=(8, 16, 32),
                 proposal_creator_params=None, source=None):
        entry, n_built = settle_n_fg_class(type(self), pretrained_model, n_fg_class, 20)
        vgg_initialW = initializers.Zero() if pretrained_model else initializers.Normal(0.01)
        extractor = VGG16Extractor(initialW=vgg_initialW)
        rpn = region_proposal_network.RegionProposalNetwork(
            512, 512, ratios, anchor_scales, self.feat_stride,
            proposal_creator_params=proposal_creator_params)
        head = VGG16RoIHead(n_built + 1, 7, 1 / self.feat_stride, vgg_initialW)
        super().__init__(extractor, rpn, head, VGG16_MEAN, min_size=min_size,
                         max_size=max_size)
        pretrained.load_pretrained(self, pretrained_model, n_fg_class, n_built, entry,
                                   self.reset_head, source=source)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook (ChainerCV or cvzoo names).

        A ChainerCV detector file has cvzoo's names; the offset layers ``rpn/loc`` and
        ``head/cls_loc`` are permuted from (dy, dx, dh, dw) to (dx, dy, dw, dh). A VGG16
        classifier file (the ``'imagenet'`` key) fills ``extractor/conv*`` and
        ``head/fc6``, ``head/fc7`` (its ``fc8`` is dropped); the RPN and the
        class-dependent layers keep their current values.

        Raises:
            ValueError: a source other than 'chainercv' or 'cvzoo'.
            cvzoo.errors.WeightLoadError: file keys the model does not have.
        """
        if source not in ('chainercv', 'cvzoo'):
            raise ValueError(f"source: expected 'chainercv' or 'cvzoo' for Faster R-CNN "
                             f'weights, got {source!r}')
        names = [key.removeprefix('/') for key in raw]
        if any(name.startswith('head/') for name in names):
            loc_keys = _LOC_KEYS if source == 'chainercv' else ()
            return faster_rcnn.convert_chainercv(self, raw, _same_name, loc_keys)
        arrays = faster_rcnn.convert_chainercv(self, raw, _vgg16_classifier_name, ())
        return {**self.state_arrays(), **arrays}


def _same_name(key):
    return key


def _vgg16_classifier_name(key):
    """A VGG16 classifier's key -> this model's (None for fc8, which is dropped)."""
    if key.startswith('fc8/'):
        return None
    if key.startswith(('fc6/', 'fc7/')):
        return 'head/' + key
    return 'extractor/' + key


def settle_n_fg_class(model_class, pretrained_model, n_fg_class, default):
    """:func:`cvzoo.models.weights.pretrained.settle_n_class` of a Faster R-CNN: a local
    detector .npz builds the heads of its own class count (its ``class_bias_keys``)."""
    entry, n_built = pretrained.settle_n_class(model_class, pretrained_model, n_fg_class,
                                               default, BACKBONE_KEYS)
    if entry is None and pretrained_model:
        n_file = _file_n_fg_class(pretrained_model, model_class.class_bias_keys)
        if n_file is not None:
            n_built = n_file
    return entry, n_built


def _file_n_fg_class(path, bias_keys):
    """Foreground classes of a detector .npz (from its class-score bias), else None."""
    if not os.path.isfile(path) or file_format.sniff_format(path) != 'npz':
        return None
    with numpy.load(path, allow_pickle=False) as npz:
        for name in npz.files:
            if name.removeprefix('/') in bias_keys:
                return int(npz[name].shape[0]) - 1
    return None


_CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
_PRESET = zoo.Preset(size=600, mean=VGG16_MEAN, resize_backend='cv2')
_VOC_NOTES = ('Trained by ChainerCV (examples/faster_rcnn) with y-first boxes; cvzoo permutes '
              'the offset layers to x-first. ChainerCV resizes with OpenCV, cvzoo with Pillow.')


def _voc_entry(file_name, percent, data):
    return zoo.Weights(
        url=_CHAINERCV_URL + file_name, sha256=zoo.UNPUBLISHED, source_format='chainercv_npz',
        n_class=20, label_names=tuple(voc_bbox_label_names), preset=_PRESET,
        reported=zoo.Score('map_voc07', percent / 100, 'voc2007_test',
                           f'ChainerCV examples/faster_rcnn/README.md ({data}, VOC2007 test, '
                           '11-point metric)'),
        notes=_VOC_NOTES, convert_from='chainercv', box_convention='inclusive',
        license='MIT (ChainerCV)')


FasterRCNNVGG16.weights = {
    'voc07': _voc_entry('faster_rcnn_vgg16_voc07_trained_2018_06_01.npz', 70.6,
                        'VOC2007 trainval'),
    'voc0712': _voc_entry('faster_rcnn_vgg16_voc0712_trained_2017_07_21.npz', 74.7,
                          'VOC2007+2012 trainval'),
    'imagenet': zoo.Weights(
        url=_CHAINERCV_URL + 'vgg16_imagenet_converted_2017_07_18.npz',
        sha256=zoo.UNPUBLISHED, source_format='chainercv_npz', n_class=1000,
        label_names=tuple(imagenet_label_names.imagenet_label_names), preset=_PRESET,
        # The backbone's own score, the same file as VGG16's 'imagenet_chainercv' entry.
        reported=vgg16.VGG16.weights['imagenet_chainercv'].reported,
        notes='VGG16 classifier of Simonyan and Zisserman converted by ChainerCV, for '
              'training; it holds no detector, so its score is its ImageNet top-1.',
        convert_from='chainercv', license='MIT (ChainerCV)'),
}
