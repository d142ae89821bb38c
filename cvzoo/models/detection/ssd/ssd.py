"""SSD300 and SSD512 (Liu et al., "SSD: Single Shot MultiBox Detector", ECCV 2016).

What predict() does, as ChainerCV's SSD: resize each image to the square input
(bilinear), subtract the RGB mean (123, 117, 104), run the VGG16 extractor and the
multibox heads, decode every anchor's box, softmax over background + n_fg_class
classes, then per class keep the boxes scoring at or above ``score_thresh`` and
suppress at IoU >= ``nms_thresh`` (0.45), and map the boxes back to the image's own
size (x-first, as every cvzoo box). As ChainerCV, SSD300 and SSD512 cap the boxes
neither per class nor per image, so that ChainerCV's weights give ChainerCV's
detections (tests/models/detection/ssd/test_chainercv_reference.py).

Differences from ChainerCV: boxes are clipped to the image after the NMS (cvzoo's
detection contract; ChainerCV returns boxes that may stick out), results are sorted by
decreasing score instead of by class, and the resize is Pillow's bilinear (ChainerCV's
when OpenCV is absent); the weights were trained and evaluated with OpenCV's. The
:class:`SSD` base (so SSDTiny, cvzoo's own) keeps Caffe SSD's caps instead: at most
``nms_top_k`` (400) boxes per class before NMS and ``max_detections`` (200) per image
after it, and scores strictly above the threshold.
"""

import os
import re

import numpy

import cvzoo.core.links as L
from cvzoo.core import backend, initializers
from cvzoo.datasets.imagenet import imagenet_label_names
from cvzoo.datasets.voc.voc_label_names import voc_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.detection import box_coding, detector
from cvzoo.models.detection.ssd import extractors, multibox, multibox_coder
from cvzoo.models.weights import pretrained
from cvzoo.models.weights.converters import file_format
from cvzoo.transforms.image import resize

# RGB, ChainerCV's rounding of the ImageNet mean
SSD_MEAN = (123.0, 117.0, 104.0)
SSD_PRESETS = {'visualize': {'score_thresh': 0.6, 'nms_thresh': 0.45},
               'evaluate': {'score_thresh': 0.01, 'nms_thresh': 0.45}}
# weights keys that hold only the VGG16 part (the rest keeps its initial values)
BACKBONE_KEYS = ('imagenet',)
_LOC_KEY = re.compile(r'multibox/loc/\d+/[Wb]')


class SSD(L.Chain, detector.Detector):
    """Single Shot MultiBox Detector: an extractor, multibox heads and the anchors.

    Args:
        extractor (Link): maps a (B, 3, insize, insize) batch to feature maps; has
            ``insize``, ``grids`` and ``out_channels``.
        multibox (Multibox): the loc and conf heads.
        steps (sequence of float): anchor spacing of each map, in input pixels.
        sizes (sequence of float): ``len(grids) + 1`` anchor sizes, in input pixels.
        variance (tuple of float): of the box encoding.
        mean (tuple of float): RGB mean subtracted from the resized image.

    Attributes:
        extractor, multibox: as given.
        coder (MultiboxCoder): the anchors and the box encoding.
        label_names (tuple of str or None): class names of the loaded weights.
    """

    presets = SSD_PRESETS
    max_detections = 200
    # NOTE: Caffe SSD's DetectionOutput keeps at most 400 boxes per class before NMS; it
    # bounds the NMS work when weak weights put thousands of boxes above 0.01.
    nms_top_k = 400
    use_07_metric = True
    label_names = None
    # whose training training_recipe() follows (ssd/training_recipe.py REFERENCES)
    training_reference = 'chainercv'

    def __init__(self, extractor, multibox_link, steps, sizes, *, variance=(0.1, 0.2),
                 mean=SSD_MEAN):
        super().__init__()
        with self.init_scope():
            self.extractor = extractor
            self.multibox = multibox_link
            self.coder = multibox_coder.MultiboxCoder(
                extractor.grids, multibox_link.aspect_ratios, steps, sizes, variance)
        self.mean = numpy.asarray(mean, numpy.float32).reshape(-1, 1, 1)
        self.use_preset('visualize')

    @property
    def insize(self):
        """Side of the square network input."""
        return self.extractor.insize

    @property
    def n_fg_class(self):
        """Foreground classes (the conf head also predicts the background)."""
        return self.multibox.n_class - 1

    def forward(self, x):
        """(B, 3, insize, insize) -> ``mb_locs`` (B, K, 4), ``mb_confs`` (B, K, n_fg + 1)."""
        return self.multibox(self.extractor(x))

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> (3, insize, insize), resized, mean subtracted."""
        img = resize.resize(img.astype(numpy.float32, copy=False), (self.insize, self.insize))
        return img - self.mean

    def decode(self, outputs, sizes):
        """Boxes in each image's pixels and foreground scores of a batch, on the device."""
        mb_locs, mb_confs = outputs
        bbox, score = self.coder.decode(mb_locs.array, mb_confs.array)
        xp = backend.get_array_module(bbox)
        scale = xp.asarray([[W, H, W, H] for H, W in sizes], dtype=bbox.dtype) / self.insize
        return bbox * scale[:, None, :], score

    def suppress(self, bbox, score, sizes):
        """Keep each class's ``nms_top_k`` best boxes per image, then the base's NMS."""
        n_box = score.shape[1]
        if self.nms_top_k is not None and n_box > self.nms_top_k:
            xp = backend.get_array_module(score)
            kth = -xp.partition(-score, self.nms_top_k - 1, axis=1)[:, self.nms_top_k - 1]
            score = xp.where(score >= kth[:, None, :], score, 0)
        return super().suppress(bbox, score, sizes)

    def reset_multibox(self, n_fg_class):
        """Replace the heads by new ones for ``n_fg_class`` classes (extractor kept)."""
        if not isinstance(n_fg_class, int) or n_fg_class < 1:
            raise ValueError(f'n_fg_class: expected an int >= 1, got {n_fg_class!r}')
        aspect_ratios = self.multibox.aspect_ratios
        delattr(self, 'multibox')
        with self.init_scope():
            self.multibox = multibox.Multibox(n_fg_class + 1, aspect_ratios,
                                              self.extractor.out_channels)
        self.multibox.to_device(self.device)
        self.label_names = None

    def training_recipe(self, **hyper):
        """How this SSD trains: a ``TrainingRecipe``, see
        :func:`~cvzoo.models.detection.ssd.training_recipe.ssd_training_recipe`."""
        from cvzoo.models.detection.ssd import training_recipe
        return training_recipe.ssd_training_recipe(self, **hyper)

    def load_pretrained(self, path_or_key, source=None):
        """Load a zoo key or a file (a ChainerCV .npz is recognised by its names)."""
        if source is None and os.path.isfile(path_or_key) and _is_chainercv_npz(path_or_key):
            source = 'chainercv'
        return zoo.load_weights(self, path_or_key, source=source)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook: ChainerCV names to cvzoo's (the same names).

        ChainerCV's loc heads give ``(dy, dx, dh, dw)`` per anchor; their output
        channels (weights and biases) are permuted to cvzoo's ``(dx, dy, dw, dh)``. A
        file without multibox keys is a backbone file: the layers it does not hold
        besides VGG16's convolutions (norm4, the extra layers, the heads) keep their
        current values. The anchors come from the model.

        Raises:
            ValueError: a source other than 'chainercv' or 'cvzoo'.
        """
        if source not in ('chainercv', 'cvzoo'):
            raise ValueError(f"source: expected 'chainercv' or 'cvzoo' for SSD weights, got "
                             f'{source!r}')
        arrays = {key.removeprefix('/'): value for key, value in raw.items()}
        if source == 'chainercv':
            arrays = {key: box_coding.swap_xy_channels(value) if _LOC_KEY.fullmatch(key) else value
                      for key, value in arrays.items()}
        if not any(key.startswith('multibox/') for key in arrays):
            arrays = self._complete_backbone(arrays)
        arrays.setdefault('coder/default_bbox', backend.to_numpy(self.coder.default_bbox))
        return arrays

    def _complete_backbone(self, arrays):
        """Add the current value of every parameter outside VGG16's convolutions."""
        vgg_convolutions = {f'extractor/{name}/' for name in extractors.VGG_NAMES
                            if name != 'norm4'}
        for path, param in self.namedparams():
            key = path.removeprefix('/')
            if key not in arrays and key[:key.rindex('/') + 1] not in vgg_convolutions:
                arrays[key] = backend.to_numpy(param.array)
        return arrays


def _is_chainercv_npz(path):
    """True for an .npz with ChainerCV SSD names (no ``coder/default_bbox``)."""
    if file_format.sniff_format(path) != 'npz':
        return False
    with numpy.load(path, allow_pickle=False) as npz:
        names = [name.removeprefix('/') for name in npz.files]
    return 'coder/default_bbox' not in names and any(
        name.startswith('extractor/') for name in names)


def init_ssd(model, make_extractor, settings, n_fg_class, pretrained_model):
    """Build ``model`` (an SSD subclass), load ``pretrained_model`` and re-make heads.

    Args:
        model (SSD): the instance being initialised.
        make_extractor (callable): returns the extractor.
        settings (dict): ``aspect_ratios``, ``steps``, ``sizes``.
        n_fg_class (int or None): classes to detect; None takes the weights' (20 when
            there are none).
        pretrained_model (str or None): a key of ``model.weights``, a file or None.
    """
    entry, n_built = pretrained.settle_n_class(model, pretrained_model, n_fg_class, 20,
                                               BACKBONE_KEYS)
    extractor = make_extractor()
    heads = multibox.Multibox(n_built + 1, settings['aspect_ratios'], extractor.out_channels,
                              initialW=initializers.GlorotUniform())
    SSD.__init__(model, extractor, heads, settings['steps'], settings['sizes'])
    pretrained.load_pretrained(model, pretrained_model, n_fg_class, n_built, entry,
                               model.reset_multibox)


SSD300_SETTINGS = {'aspect_ratios': ((2,), (2, 3), (2, 3), (2, 3), (2,), (2,)),
                   'steps': (8, 16, 32, 64, 100, 300),
                   'sizes': (30, 60, 111, 162, 213, 264, 315)}
SSD512_SETTINGS = {'aspect_ratios': ((2,), (2, 3), (2, 3), (2, 3), (2, 3), (2,), (2,)),
                   'steps': (8, 16, 32, 64, 128, 256, 512),
                   'sizes': (35.84, 76.8, 153.6, 230.4, 307.2, 384.0, 460.8, 537.6)}


@zoo.register('ssd300', task='detection')
class SSD300(SSD):
    """SSD with a 300x300 input: 8732 anchors on maps of 38, 19, 10, 5, 3 and 1.

    Weights keys: ``'voc0712'`` (VOC 2007+2012 trainval, 20 classes; ChainerCV reports
    VOC2007 test mAP 77.8, 11-point metric), ``'imagenet'`` (VGG16 only, for training;
    ``n_fg_class`` then sets the heads).

    Args:
        n_fg_class (int or None): classes to detect; differing from the weights' re-makes
            the multibox heads after loading (the extractor keeps the weights).
        pretrained_model (str or None): a weights key, a local file (cvzoo or ChainerCV
            .npz) or None for random weights.

    >>> model = SSD300(n_fg_class=3)
    >>> len(model.coder.default_bbox)
    8732
    """

    # ChainerCV's post-processing, which these weights come from
    max_detections = None
    nms_top_k = None
    inclusive_score_thresh = True

    def __init__(self, n_fg_class=None, pretrained_model=None):
        init_ssd(self, extractors.VGG16Extractor300, SSD300_SETTINGS, n_fg_class,
                 pretrained_model)


@zoo.register('ssd512', task='detection')
class SSD512(SSD):
    """SSD with a 512x512 input: 24564 anchors on maps of 64, 32, 16, 8, 4, 2 and 1.

    Weights keys: ``'voc0712'`` (ChainerCV reports VOC2007 test mAP 79.7) and
    ``'imagenet'``. Arguments as :class:`SSD300`.

    Example (downloads the weights)::

        model = SSD512(pretrained_model='voc0712')
    """

    # ChainerCV's post-processing, which these weights come from
    max_detections = None
    nms_top_k = None
    inclusive_score_thresh = True

    def __init__(self, n_fg_class=None, pretrained_model=None):
        init_ssd(self, extractors.VGG16Extractor512, SSD512_SETTINGS, n_fg_class,
                 pretrained_model)


_CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
_PRESET_300 = zoo.Preset(size=300, mean=SSD_MEAN, resize_backend='cv2')
_PRESET_512 = zoo.Preset(size=512, mean=SSD_MEAN, resize_backend='cv2')
_VOC_NOTES = ('The SSD authors\' Caffe model converted by ChainerCV (examples/ssd/caffe2npz.py; '
              'loc heads permuted to y-first there and back to x-first by cvzoo). ChainerCV '
              'evaluates with the OpenCV resize; cvzoo resizes with Pillow.')
_BACKBONE_NOTES = ('VGG16 with fc6/fc7 reduced to convolutions (the SSD authors\' '
                   'VGG_ILSVRC_16_layers_fc_reduced), converted by ChainerCV; it has no '
                   'classifier, so the score is that of the VGG16 it was reduced from (same '
                   'convolutions; ChainerCV\'s 29.0 % top-1 error), not of this file.')


def _voc_entry(file_name, preset, percent):
    return zoo.Weights(
        url=_CHAINERCV_URL + file_name, sha256=zoo.UNPUBLISHED, source_format='chainercv_npz',
        n_class=20, label_names=tuple(voc_bbox_label_names), preset=preset,
        reported=zoo.Score('map_voc07', percent / 100, 'voc2007_test',
                           'ChainerCV examples/ssd/README.md (VOC2007 test, 11-point metric)'),
        notes=_VOC_NOTES, convert_from='chainercv', box_convention='inclusive',
        license='MIT (ChainerCV)')


def _backbone_entry(preset):
    return zoo.Weights(
        url=_CHAINERCV_URL + 'ssd_vgg16_imagenet_converted_2017_06_09.npz',
        sha256=zoo.UNPUBLISHED, source_format='chainercv_npz', n_class=1000,
        label_names=tuple(imagenet_label_names.imagenet_label_names), preset=preset,
        reported=zoo.Score('top1', 0.71, 'imagenet_val',
                           'ChainerCV examples/classification/README.md, VGG16 single center '
                           'crop (before the fc reduction)'),
        notes=_BACKBONE_NOTES, convert_from='chainercv', license='MIT (ChainerCV)')


SSD300.weights = {'voc0712': _voc_entry('ssd300_voc0712_converted_2017_06_06.npz',
                                        _PRESET_300, 77.8),
                  'imagenet': _backbone_entry(_PRESET_300)}
SSD512.weights = {'voc0712': _voc_entry('ssd512_voc0712_converted_2017_06_06.npz',
                                        _PRESET_512, 79.7),
                  'imagenet': _backbone_entry(_PRESET_512)}
