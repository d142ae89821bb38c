"""FasterRCNNFPNResNet50 and FasterRCNNFPNResNet101 (Lin et al., "Feature Pyramid Networks
for Object Detection", CVPR 2017), with ChainerCV's names, settings and COCO weights.

The backbone is ChainerCV's ResNet of arch 'he' (stride in the first 1x1 convolution,
BN eps 2e-5, frozen statistics) with pool1 padded by 1; res2 ... res5 feed the FPN
(levels 1/4 ... 1/32, plus 1/64 for the RPN). Images are resized to a shorter side of
800 (longer at most 1333), mean subtracted and zero-padded to multiples of 32.
"""

import functools

import cvzoo.core.functions as F
from cvzoo.datasets.coco.coco_label_names import coco_bbox_label_names
from cvzoo.datasets.imagenet import imagenet_label_names
from cvzoo.models import zoo
from cvzoo.models.classification.resnet import resnet
from cvzoo.models.detection import box_coding, fpn
from cvzoo.models.detection.faster_rcnn import faster_rcnn, faster_rcnn_vgg
from cvzoo.models.detection.faster_rcnn.fpn import bbox_head, rpn
from cvzoo.models.weights import pretrained

# RGB, ChainerCV's ImageNet mean of its ResNets
RESNET_MEAN = (123.15163084, 115.90288257, 103.0626238)
FPN_PRESETS = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.5},
               'evaluate': {'score_thresh': 0.05, 'nms_thresh': 0.5}}
_LOC_KEYS = ('rpn/loc/W', 'rpn/loc/b', 'head/loc/W', 'head/loc/b')


def _make_base(n_layer, initialW):
    base = resnet.ResNet(n_layer, n_class=1, arch='he', compat='chainercv',
                         initialW=initialW)
    base.pick = ('res2', 'res3', 'res4', 'res5')
    base.remove_unused()
    # NOTE: ChainerCV's FPN pads pool1 (its classifiers do not).
    base.pool1 = functools.partial(F.max_pooling_2d, ksize=3, stride=2, pad=1,
                                   cover_all=False)
    return base


class FasterRCNNFPNResNet(faster_rcnn.FasterRCNN):
    """Faster R-CNN with FPN on a ResNet; see the module docstring.

    Args:
        n_layer (int): 50 or 101.
        n_fg_class (int or None): classes to detect; None takes the weights' (80 without
            weights). A different number re-makes ``head/loc`` and ``head/conf``.
        pretrained_model (str or None): ``'coco'``, ``'imagenet'`` (the backbone only),
            a local file (cvzoo or ChainerCV .npz) or None for random weights.
        min_size, max_size (int): the resize rule (800 and 1333).
        source (str or None): names of a local file: 'cvzoo' (default) or 'chainercv'.
    """

    presets = FPN_PRESETS
    pad_stride = 32
    exp_clip = box_coding.EXP_CLIP
    inclusive_score_thresh = True  # ChainerCV's FPN keeps scores at score_thresh
    class_bias_keys = ('head/conf/b', 'bbox_head/conf/b')

    def __init__(self, n_layer, n_fg_class=None, pretrained_model=None, *, min_size=800,
                 max_size=1333, source=None):
        entry, n_built = faster_rcnn_vgg.settle_n_fg_class(type(self), pretrained_model,
                                                           n_fg_class, 80)
        super().__init__(*make_parts(n_layer, n_built + 1), RESNET_MEAN, min_size=min_size,
                         max_size=max_size)
        pretrained.load_pretrained(self, pretrained_model, n_fg_class, n_built, entry,
                                   self.reset_head, source=source)

    def input_scales(self, sizes, prepared):
        """Per image, the factor decode() divides RoIs by (:func:`input_scales`)."""
        return input_scales(self, sizes)

    def training_recipe(self, **hyper):
        """How this detector trains: a ``TrainingRecipe``, ``faster_rcnn_fpn_training_recipe`` of
        :mod:`~cvzoo.models.detection.faster_rcnn.training_recipe`."""
        from cvzoo.models.detection.faster_rcnn import training_recipe
        return training_recipe.faster_rcnn_fpn_training_recipe(self, **hyper)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook (:func:`convert_weights`)."""
        return convert_weights(self, raw, source)


def make_parts(n_layer, n_class):
    """The parts of ChainerCV's FPN R-CNNs: the FPN on a ResNet of ``n_layer`` layers
    ('he' arch), the FPN's RPN and the box head for ``n_class`` classes (background
    included), as ``(extractor, rpn, head)``."""
    extractor = fpn.FPN(_make_base(n_layer, None), (256, 512, 1024, 2048), fpn.FPN_SCALES)
    return (extractor, rpn.FPNRegionProposalNetwork(fpn.FPN_SCALES),
            bbox_head.FPNBboxHead(n_class, fpn.FPN_SCALES))


def input_scales(model, sizes):
    """Per image of ``sizes`` (H, W), the factor decode() divides RoIs by: ChainerCV's
    FPN takes the exact resize factor, not the ratio of the rounded sizes (as its
    FasterRCNN does)."""
    return [faster_rcnn.resize_scale(model, size) for size in sizes]


def convert_weights(model, raw, source):
    """The zoo's conversion hook of ChainerCV's FPN R-CNNs (ChainerCV or cvzoo names).

    A ChainerCV detector file has cvzoo's names (its head may be named ``bbox_head``);
    ``rpn/loc`` and ``head/loc`` are permuted from (dy, dx, dh, dw) to (dx, dy, dw, dh).
    A ResNet classifier file (``'imagenet'``) fills ``extractor/base`` (its ``fc6`` is
    dropped); the rest of ``model`` keeps its current values.

    Raises:
        ValueError: a source other than 'chainercv' or 'cvzoo'.
        cvzoo.errors.WeightLoadError: file keys the model does not have.
    """
    if source not in ('chainercv', 'cvzoo'):
        raise ValueError(f"source: expected 'chainercv' or 'cvzoo' for Faster R-CNN "
                         f'FPN weights, got {source!r}')
    names = [key.removeprefix('/') for key in raw]
    if any(name.startswith('extractor/') for name in names):
        loc_keys = _LOC_KEYS if source == 'chainercv' else ()
        return faster_rcnn.convert_chainercv(model, raw, _detector_name, loc_keys)
    arrays = faster_rcnn.convert_chainercv(model, raw, _resnet_classifier_name, ())
    return {**model.state_arrays(), **arrays}


def _detector_name(key):
    return 'head/' + key.removeprefix('bbox_head/') if key.startswith('bbox_head/') else key


def _resnet_classifier_name(key):
    return None if key.startswith('fc6/') else 'extractor/base/' + key


@zoo.register('faster_rcnn_fpn_resnet50', task='detection')
class FasterRCNNFPNResNet50(FasterRCNNFPNResNet):
    """Faster R-CNN FPN on ResNet-50. Weights keys: ``'coco'`` (COCO 2017 train, trained
    by ChainerCV; mmAP 37.1 on val2017), ``'imagenet'`` (ResNet-50 'he' backbone).
    Other arguments as :class:`FasterRCNNFPNResNet`.

    Example (downloads the weights)::

        model = FasterRCNNFPNResNet50(pretrained_model='coco')
    """

    def __init__(self, n_fg_class=None, pretrained_model=None, **kwargs):
        super().__init__(50, n_fg_class, pretrained_model, **kwargs)


@zoo.register('faster_rcnn_fpn_resnet101', task='detection')
class FasterRCNNFPNResNet101(FasterRCNNFPNResNet):
    """Faster R-CNN FPN on ResNet-101. Weights keys: ``'coco'`` (mmAP 39.5 on val2017),
    ``'imagenet'``. Other arguments as :class:`FasterRCNNFPNResNet`."""

    def __init__(self, n_fg_class=None, pretrained_model=None, **kwargs):
        super().__init__(101, n_fg_class, pretrained_model, **kwargs)


_CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
_PRESET = zoo.Preset(size=800, mean=RESNET_MEAN, resize_backend='cv2')


_RESNETS = {50: resnet.ResNet50, 101: resnet.ResNet101}


def _weights(n_layer, percent):
    coco = zoo.Weights(
        url=f'{_CHAINERCV_URL}faster_rcnn_fpn_resnet{n_layer}_coco_trained_2019_03_15.npz',
        sha256=zoo.UNPUBLISHED, source_format='chainercv_npz', n_class=80,
        label_names=tuple(coco_bbox_label_names), preset=_PRESET,
        reported=zoo.Score('map_coco', percent / 100, 'coco_val2017',
                           'ChainerCV examples/fpn/README.md (mmAP, COCO val2017)'),
        notes='Trained by ChainerCV with y-first boxes; cvzoo permutes the offset layers. '
              'ChainerCV resizes with OpenCV, cvzoo with Pillow.',
        convert_from='chainercv', box_convention='continuous', license='MIT (ChainerCV)')
    imagenet = zoo.Weights(
        url=f'{_CHAINERCV_URL}resnet{n_layer}_imagenet_converted_2018_03_07.npz',
        sha256=zoo.UNPUBLISHED, source_format='chainercv_npz', n_class=1000,
        label_names=tuple(imagenet_label_names.imagenet_label_names), preset=_PRESET,
        # The backbone's own score: the same file as ResNet's 'imagenet_he' entry.
        reported=_RESNETS[n_layer].weights['imagenet_he'].reported,
        notes="He et al.'s Caffe ResNet converted by ChainerCV (arch 'he'), for training; "
              'it holds no detector, so its score is its ImageNet top-1.',
        convert_from='chainercv', license='MIT (ChainerCV)')
    return {'coco': coco, 'imagenet': imagenet}


FasterRCNNFPNResNet50.weights = _weights(50, 37.1)
FasterRCNNFPNResNet101.weights = _weights(101, 39.5)
