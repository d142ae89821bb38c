"""PSPNet on a dilated ResNet-50/101, with ChainerCV's sliding-window inference."""

import dataclasses
import typing

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend, config, initializers
from cvzoo.models import zoo
from cvzoo.models.common import network_runtime
from cvzoo.models.segmentation import chainercv_names, segmentation_model
from cvzoo.models.segmentation.pspnet import presets, sliding_window
from cvzoo.models.segmentation.pspnet.dilated_resnet import DilatedResNet
from cvzoo.models.segmentation.pspnet.pyramid_pooling_module import PyramidPoolingModule
from cvzoo.utils import image as image_utils

DEFAULT_INPUT_SIZE = presets.CITYSCAPES_SIZE
_FEATURE_STRIDE = 8


class PSPNet(segmentation_model.SegmentationModel):
    """Pyramid Scene Parsing Network (Zhao, Shi, Qi, Wang and Jia, "Pyramid Scene Parsing
    Network", CVPR 2017), as ChainerCV's ``PSPNet``.

    A dilated ResNet (output stride 8) feeds a pyramid pooling module (1, 2, 3 and 6
    bins); a 3x3 Conv2DBNActiv to 512 channels and a 1x1 convolution give the class
    scores, resized bilinearly (corners aligned) to the input. The auxiliary head on
    ``res4`` exists only in training (:class:`PSPNetTrainChain`).

    predict() follows ChainerCV: the ImageNet mean is subtracted (RGB, no std); an
    image whose longer side exceeds the input size is covered by windows of that size
    with a stride of 2/3 of it, and the softmax probabilities of the overlapping windows
    are averaged; a smaller image is centred on a zero canvas. Each window is also
    predicted mirrored left-right and averaged (``flip``); ``scales`` adds the
    average over rescaled copies of the image.

    Differences from ChainerCV: the canvas offset of a small image is its intent
    (``floor((size - side) / 2)``; ChainerCV's resize_contain loses a pixel when that
    difference is odd); images are resized by cvzoo's bilinear resize, not OpenCV's;
    ``predict`` does not accumulate scores across images of one call.

    Args:
        n_layer (int): 50 or 101 (the subclasses fix it).
        n_class (int or None): the classes; None takes the weights'.
        pretrained_model (str or None): a weights key, a local weight file or None.
        input_size (int or tuple of int or None): (H, W) of the network's input, which
            also fixes the pooling windows; None takes the weights' (713x713 without).
        initialW: initializer of the convolutions (default He normal).
        flip (bool): average with the mirrored prediction (ChainerCV always does).
        scales (tuple of float or None): also predict the image resized by each factor.

    Attributes:
        extractor (DilatedResNet): picks ``('res4', 'res5')``.
        ppm (PyramidPoolingModule), head_conv1 (Conv2DBNActiv),
        head_conv2 (Convolution2D with bias): the head.
    """

    runtimes = ('cvzoo',)

    weights: typing.ClassVar[dict] = {}

    def __init__(self, n_layer, n_class=None, pretrained_model=None, input_size=None, *,
                 initialW=None, flip=True, scales=None):
        super().__init__()
        cls = type(self)
        built_n_class = segmentation_model.n_class_for(cls, pretrained_model, n_class)
        entry = cls.weights.get(pretrained_model) if isinstance(pretrained_model, str) else None
        self.input_size = _size_pair(input_size or (entry.preset.size if entry
                                                    else DEFAULT_INPUT_SIZE))
        self.flip = bool(flip)
        self.scales = _check_scales(scales)
        if initialW is None:  # NOTE: zeros are cheaper than random numbers about to be replaced
            initialW = initializers.Zero() if pretrained_model else initializers.HeNormal()
        feat_size = tuple(s // _FEATURE_STRIDE for s in self.input_size)
        with self.init_scope():
            self.extractor = DilatedResNet(n_layer, initialW)
            self.extractor.pick = ('res4', 'res5')
            self.ppm = PyramidPoolingModule(2048, feat_size, initialW=initialW)
            self.head_conv1 = L.Conv2DBNActiv(4096, 512, 3, 1, 1, initialW=initialW)
        self.reset_head(built_n_class)
        self._load_pretrained(pretrained_model, n_class)
        self.preset = dataclasses.replace(self.preset or presets.preset(self.input_size),
                                          size=self.input_size)

    def training_recipe(self, **hyper):
        """How PSPNet trains (see :mod:`cvzoo.models.segmentation.pspnet.training_recipe`)."""
        from cvzoo.models.segmentation.pspnet import training_recipe

        return training_recipe.pspnet_recipe(self, **hyper)

    def reset_head(self, n_class):
        """Re-make ``head_conv2`` for ``n_class`` classes (random weights)."""
        if not isinstance(n_class, int) or n_class < 1:
            raise ValueError(f'n_class: expected a positive int, got {n_class!r}')
        self.n_class = n_class
        with self.init_scope():
            self.head_conv2 = L.Convolution2D(512, n_class, 1, 1, 0,
                                              initialW=initializers.HeNormal())
        self.head_conv2.to_device(self.device)

    def head(self, res5):
        """Class scores at the features' resolution from ``res5`` (B, 2048, h, w)."""
        return self.head_conv2(self.head_conv1(self.ppm(res5)))

    def forward(self, x):
        """Class scores of (B, 3, H, W) preprocessed images (mean subtracted, RGB).

        Returns:
            Variable: (B, n_class, H, W) float32 logits.
        """
        _, res5 = self.extractor(x)
        return F.resize_images(self.head(res5), x.shape[2:], align_corners=True)

    def convert_weights(self, raw, source):
        """The zoo's hook: ChainerCV's names are this model's; all keys are checked."""
        return chainercv_names.take_chainercv_names(self, raw, source)

    def predict(self, imgs, batchsize=1, runtime='cvzoo'):
        """Label every pixel of each image (see the class docstring for the inference).

        Args:
            imgs: an iterable of images: (3, H, W) float arrays in [0, 255] RGB, (H, W, 3)
                uint8 arrays, PIL images or file paths.
            batchsize (int): windows (each with its mirror image) per forward pass.
            runtime (str): only 'cvzoo' (sliding windows and flips run the network).

        Returns:
            list of numpy.ndarray: one (H, W) int32 map per image, values in
            [0, n_class).
        """
        network_runtime.check_runtime(runtime, self)
        labels = []
        with self.device, config.using_config('train', False), config.no_backprop_mode():
            for i, img in enumerate(imgs):
                score = self.scores(image_utils.as_chw_image(img, f'imgs[{i}]'), batchsize)
                label = score[:self.n_class].argmax(axis=0)
                labels.append(backend.to_numpy(label).astype(numpy.int32, copy=False))
        return labels

    def scores(self, img, batchsize=1):
        """(n_class, H, W) float32 class probabilities of one (3, H, W) RGB image, on the
        model's device, averaged over ``scales`` (and the flip)."""
        if not self.scales:
            return self._tile_scores(img, batchsize)
        size = img.shape[1:]
        total = 0
        for scale in self.scales:
            scaled = (int(size[0] * scale), int(size[1] * scale))
            x = img if scaled == size else _resize(img, scaled, align_corners=False)
            prob = self._tile_scores(x, batchsize)
            if scaled != size:
                prob = _resize(prob, size, align_corners=True)
            total = total + prob
        return total / len(self.scales)

    def _tile_scores(self, img, batchsize):
        x = self._standardize(img)
        if max(img.shape[1:]) > max(self.input_size):
            return sliding_window.tile_scores(self._probabilities, x, self.input_size,
                                              self.device, flip=self.flip,
                                              batchsize=batchsize)
        return sliding_window.contain_scores(self._probabilities, x, self.input_size,
                                             self.device, flip=self.flip)

    def prepare(self, img):
        """Standardise one (3, H, W) RGB image and put its channels in the network's order,
        at its own size: PSPNet sees images at their own scale, in windows of
        ``input_size`` (:meth:`scores`)."""
        return numpy.ascontiguousarray(self._standardize(img), numpy.float32)

    def _standardize(self, img):
        mean = numpy.asarray(self.preset.mean, numpy.float32)[:, None, None]
        std = numpy.asarray(self.preset.std, numpy.float32)[:, None, None]
        x = (numpy.asarray(img, numpy.float32) - mean) / std
        return x[::-1] if self.channel_order == 'bgr' else x

    def _probabilities(self, x):
        return F.softmax(self.forward(x), axis=1).array


def _resize(array, size, align_corners):
    """Resize a (C, H, W) array (host or device) bilinearly to ``size``."""
    return F.resize_images(array[None], tuple(size), align_corners=align_corners).array[0]


def _size_pair(size):
    pair = (size, size) if isinstance(size, int) else tuple(size)
    if len(pair) != 2 or not all(isinstance(s, int) and s >= 6 * _FEATURE_STRIDE for s in pair):
        raise ValueError(f'input_size: expected an int or (H, W) of ints >= '
                         f'{6 * _FEATURE_STRIDE} (the 6x6 pyramid level), got {size!r}')
    return pair


def _check_scales(scales):
    if scales is None:
        return None
    scales = tuple(float(s) for s in scales)
    if not scales or min(scales) <= 0:
        raise ValueError(f'scales: expected positive factors or None, got {scales!r}')
    return scales


@zoo.register('pspnet_resnet50', task='semantic_segmentation')
class PSPNetResNet50(PSPNet):
    """PSPNet on dilated ResNet-50. Weights keys: ``'cityscapes'`` (19 classes, 713x713,
    ChainerCV reports 73.99 % mIoU on Cityscapes val), ``'ade20k'`` (150 classes,
    473x473, 34.97 %). Arguments as in :class:`PSPNet` without ``n_layer``.

    Example (downloads the weights)::

        model = PSPNetResNet50(pretrained_model='cityscapes')
        labels = model.predict(['street.png'])
    """

    def __init__(self, n_class=None, pretrained_model=None, input_size=None, **kwargs):
        super().__init__(50, n_class, pretrained_model, input_size, **kwargs)


@zoo.register('pspnet_resnet101', task='semantic_segmentation')
class PSPNetResNet101(PSPNet):
    """PSPNet on dilated ResNet-101. Weights keys: ``'cityscapes'`` (19 classes, 713x713,
    ChainerCV reports 76.01 % mIoU on Cityscapes val), ``'ade20k'`` (150 classes,
    473x473, 36.55 %). Arguments as in :class:`PSPNet` without ``n_layer``."""

    def __init__(self, n_class=None, pretrained_model=None, input_size=None, **kwargs):
        super().__init__(101, n_class, pretrained_model, input_size, **kwargs)


PSPNetResNet50.weights = presets.pspnet_weights(50, {'cityscapes': 73.99, 'ade20k': 34.97})
PSPNetResNet101.weights = presets.pspnet_weights(101, {'cityscapes': 76.01, 'ade20k': 36.55})
