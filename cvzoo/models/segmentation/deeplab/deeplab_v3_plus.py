"""DeepLab V3+ on Xception-65, with ChainerCV's multi-scale and flip inference."""

import dataclasses

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend, config, initializers
from cvzoo.models import zoo
from cvzoo.models.common import network_runtime
from cvzoo.models.segmentation import chainercv_names, segmentation_model
from cvzoo.models.segmentation.deeplab import presets
from cvzoo.models.segmentation.deeplab.aspp import SeparableASPP
from cvzoo.models.segmentation.deeplab.decoder import Decoder
from cvzoo.models.segmentation.deeplab.xception import Xception65
from cvzoo.utils import image as image_utils

DEFAULT_MIN_INPUT_SIZE = (513, 513)
# NOTE: the converted TensorFlow weights: BN eps 1e-3 in the backbone, 1e-5 after it.
EXTRACTOR_BN = {'decay': 0.9997, 'eps': 1e-3}
HEAD_BN = {'decay': 0.9997, 'eps': 1e-5}


@zoo.register('deeplab_v3plus_xception65', task='semantic_segmentation')
class DeepLabV3plusXception65(segmentation_model.SegmentationModel):
    """DeepLab V3+ (Chen, Zhu, Papandreou, Schroff and Adam, "Encoder-Decoder with
    Atrous Separable Convolution for Semantic Image Segmentation", ECCV 2018) on
    Xception-65 at output stride 8, as ChainerCV's ``DeepLabV3plusXception65``.

    Xception-65 gives low-level (stride 4) and high-level (stride 8) features; the
    separable ASPP (rates 12, 24, 36) and the decoder give logits at stride 4, which
    are turned into probabilities and resized (bilinear, corners aligned) to the input.

    predict() follows ChainerCV: an image is padded at the bottom and right to at least
    ``min_input_size`` and scaled to [-1, 1] (see ``presets``); the probabilities of its
    region are averaged over ``scales`` (the image resized by each factor, the
    probabilities resized back) and, with ``flip``, over the mirrored image.

    Weights keys: ``'voc'`` (21 classes, ChainerCV reports 82.36 % mIoU on VOC2012 val),
    ``'cityscapes'`` (19, 79.14 % on Cityscapes val, min_input_size 1025x2049),
    ``'ade20k'`` (150, 42.52 % on ADE20K val).

    Differences from ChainerCV: its predict() sums the scores of all the images of one
    call (each label depends on the images before it); here each image is on its own.
    Resizes use cvzoo's bilinear resize, not OpenCV's.

    Args:
        n_class (int or None): the classes; None takes the weights'.
        pretrained_model (str or None): a weights key, a local weight file or None.
        min_input_size (int or tuple of int or None): (H, W) the input is padded to;
            None takes the weights' (513x513 without).
        scales (tuple of float or None): resize factors averaged by predict(); None is
            ``(1.0,)``.
        flip (bool): also average the mirrored image's prediction.
        initialW: initializer of the convolutions (default He normal).

    Attributes:
        feature_extractor (Xception65), aspp (SeparableASPP), decoder (Decoder).

    Example (downloads the weights)::

        model = DeepLabV3plusXception65(pretrained_model='voc', flip=True)
        labels = model.predict(['cat.jpg'])
    """

    runtimes = ('cvzoo',)

    def __init__(self, n_class=None, pretrained_model=None, min_input_size=None,
                 scales=None, flip=False, *, initialW=None):
        super().__init__()
        cls = type(self)
        built_n_class = segmentation_model.n_class_for(cls, pretrained_model, n_class)
        _check_n_class(built_n_class)
        entry = cls.weights.get(pretrained_model) if isinstance(pretrained_model, str) else None
        self.min_input_size = _size_pair(min_input_size or (
            entry.preset.size if entry else DEFAULT_MIN_INPUT_SIZE))
        self.scales = _check_scales(scales)
        self.flip = bool(flip)
        if initialW is None:  # NOTE: zeros are cheaper than random numbers about to be replaced
            initialW = initializers.Zero() if pretrained_model else initializers.HeNormal()
        with self.init_scope():
            self.feature_extractor = Xception65(EXTRACTOR_BN, initialW)
            self.aspp = SeparableASPP(2048, 256, bn_kwargs=HEAD_BN, initialW=initialW)
            self.decoder = Decoder(256, built_n_class, 48, 256, bn_kwargs=HEAD_BN,
                                   initialW=initialW)
        self.n_class = built_n_class
        self._load_pretrained(pretrained_model, n_class)
        self.preset = dataclasses.replace(
            self.preset or presets.preset(self.min_input_size), size=self.min_input_size)

    def reset_head(self, n_class):
        """Re-make the decoder's ``conv_logits`` for ``n_class`` classes (random weights)."""
        _check_n_class(n_class)
        self.decoder.reset_logits(n_class, initializers.HeNormal())
        self.decoder.conv_logits.to_device(self.device)
        self.n_class = n_class

    def forward(self, x):
        """Class logits of (B, 3, H, W) images scaled to [-1, 1].

        Returns:
            Variable: (B, n_class, h, w) float32 at stride 4 (h = ceil(H / 4) for the
            odd sizes the padding gives).
        """
        lowlevel, highlevel = self.feature_extractor(x)
        return self.decoder(lowlevel, self.aspp(highlevel))

    def convert_weights(self, raw, source):
        """The zoo's hook: ChainerCV's names are this model's; all keys are checked."""
        return chainercv_names.take_chainercv_names(self, raw, source)

    def predict(self, imgs, runtime='cvzoo'):
        """Label every pixel of each image (see the class docstring for the inference).

        Args:
            imgs: an iterable of images: (3, H, W) float arrays in [0, 255] RGB, (H, W, 3)
                uint8 arrays, PIL images or file paths.
            runtime (str): only 'cvzoo' (scales and flips run the network per image).

        Returns:
            list of numpy.ndarray: one (H, W) int32 map per image, values in
            [0, n_class).
        """
        network_runtime.check_runtime(runtime, self)
        labels = []
        with self.device, config.using_config('train', False), config.no_backprop_mode():
            for i, img in enumerate(imgs):
                score = self.scores(image_utils.as_chw_image(img, f'imgs[{i}]'))
                labels.append(backend.to_numpy(score.argmax(axis=0)).astype(numpy.int32))
        return labels

    def scores(self, img):
        """(n_class, H, W) float32 class probabilities of one (3, H, W) RGB image, on the
        model's device, averaged over ``scales`` and the flip."""
        size = img.shape[1:]
        total = 0
        for scale in self.scales:
            scaled = size if scale == 1 else (int(size[0] * scale), int(size[1] * scale))
            x = img if scaled == size else _resize(img, scaled)
            prob = self._probabilities(x)
            total = total + (prob if scaled == size else _resize(prob, size))
        return total / len(self.scales)

    def prepare(self, img):
        """Standardise a (3, H, W) RGB image and zero-pad it (bottom, right) to at least
        ``min_input_size``; returns (3, H', W') float32."""
        mean = numpy.asarray(self.preset.mean, numpy.float32)[:, None, None]
        std = numpy.asarray(self.preset.std, numpy.float32)[:, None, None]
        size = tuple(max(m, s) for m, s in zip(self.min_input_size, img.shape[1:]))
        x = numpy.zeros((3,) + size, numpy.float32)
        x[:, :img.shape[1], :img.shape[2]] = (img - mean) / std
        return x

    def _probabilities(self, img):
        """(n_class, H, W) probabilities of one image (and its mirror, with ``flip``)."""
        h, w = img.shape[1:]
        batch = [self.prepare(img)]
        if self.flip:
            batch.append(self.prepare(img[:, :, ::-1]))
        x = backend.to_device(numpy.stack(batch), self.device)
        prob = F.softmax(self.forward(x), axis=1)
        prob = F.resize_images(prob, x.shape[2:], align_corners=True).array[:, :, :h, :w]
        if self.flip:
            return (prob[0] + prob[1, :, :, ::-1]) / 2
        return prob[0]


def _resize(array, size):
    """Resize a (C, H, W) array bilinearly (half-pixel centres, as OpenCV)."""
    return F.resize_images(array[None], tuple(size), align_corners=False).array[0]


def _check_n_class(n_class):
    if not isinstance(n_class, int) or n_class < 1:
        raise ValueError(f'n_class: expected a positive int, got {n_class!r}')


def _size_pair(size):
    pair = (size, size) if isinstance(size, int) else tuple(size)
    if len(pair) != 2 or not all(isinstance(s, int) and s >= 1 for s in pair):
        raise ValueError(f'min_input_size: expected an int or (H, W) of positive ints, '
                         f'got {size!r}')
    return pair


def _check_scales(scales):
    if scales is None:
        return (1.0,)
    scales = tuple(float(s) for s in scales)
    if not scales or min(scales) <= 0:
        raise ValueError(f'scales: expected positive factors or None, got {scales!r}')
    return scales


DeepLabV3plusXception65.weights = presets.deeplab_weights()
