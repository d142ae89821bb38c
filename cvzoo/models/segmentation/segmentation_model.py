"""SegmentationModel: the shared predict() and pretrained-weights handling of segmenters.

A semantic segmenter subclass builds its layers, implements ``forward(x)`` returning
(B, C, h, w) class scores, and ``reset_head(n_class)``. This base gives it:

- ``predict(imgs)``: DESIGN.md's semantic segmentation contract. Each image is resized
  to the preset's size as its ``resize_backend`` did in training (unless
  ``resize_input`` is False: the network then sees each image at its own size, as
  SegNet's evaluation does), standardised with its mean/std and put in the channel
  order the network takes (``channel_order``); the scores are resized back to the
  image's own size (bilinear, half-pixel centres) and the arg max over the first
  ``n_class`` channels is the label;
- ``_load_pretrained(pretrained_model, n_class)``: a zoo key or a local file, with
  ``n_class`` different from the weights' for fine-tuning (all but the head load).
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import transforms
from cvzoo.core import backend, config
from cvzoo.models.common import network_runtime
from cvzoo.models.weights import pretrained
from cvzoo.utils import image as image_utils

CHANNEL_ORDERS = ('rgb', 'bgr')


def n_class_for(model_class, pretrained_model, n_class):
    """The head size to build with: the weights' when a zoo key is given, else n_class.

    Raises:
        ValueError: neither a zoo key nor ``n_class`` says how many classes.
    """
    return pretrained.settle_n_class(model_class, pretrained_model, n_class, None)[1]


class SegmentationModel(L.Chain):
    """Base class of semantic segmenters; see the module docstring.

    Attributes:
        n_class (int): the classes predict() chooses from (labels 0 .. n_class - 1).
        preset (zoo.Preset): the preprocessing predict() applies. ``mean`` and ``std``
            are per RGB channel, applied to values in [0, 255].
        channel_order (str): 'rgb' or 'bgr', the order of the channels the network
            takes (the weights' training order); predict() flips after standardising.
        label_names (tuple of str or None): class names of the loaded weights.
        runtimes (tuple of str): what predict() can run the network in.
        resize_input (bool): resize images to ``preset.size`` before the network.
    """

    runtimes = network_runtime.RUNTIMES
    preset = None
    channel_order = 'rgb'
    resize_input = True
    label_names = None
    n_class = None

    def _load_pretrained(self, pretrained_model, n_class, source=None):
        """Load weights (a key or a path), then re-make the head when n_class differs."""
        pretrained.load_pretrained_with_preset(self, pretrained_model, n_class, source=source)

    def reset_head(self, n_class):
        """Replace the layers that depend on the number of classes (new random weights)."""
        raise NotImplementedError(f'{type(self).__name__} does not implement reset_head')

    def training_recipe(self, **hyper):
        """How this segmenter trains (see :mod:`cvzoo.models.segmentation.training_recipe`)."""
        from cvzoo.models.segmentation import training_recipe

        return training_recipe.segmentation_recipe(self, **hyper)

    def prepare(self, img):
        """Preprocess one image: resize, standardise, reorder the channels.

        Args:
            img (numpy.ndarray): (3, H, W) float32, RGB in [0, 255].

        Returns:
            numpy.ndarray: (3, h, w) float32, (h, w) = :meth:`input_size` of the image.
        """
        preset = self.preset
        size = self.input_size(img)
        img = numpy.asarray(img, numpy.float32)
        if img.shape[1:] != size:
            img = self._resize(img, size)
        mean = numpy.asarray(preset.mean, numpy.float32)[:, None, None]
        std = numpy.asarray(preset.std, numpy.float32)[:, None, None]
        img = (img - mean) / std
        if self.channel_order not in CHANNEL_ORDERS:
            raise ValueError(f'channel_order: expected one of {CHANNEL_ORDERS}, got '
                             f'{self.channel_order!r}')
        if self.channel_order == 'bgr':
            img = img[::-1]
        return numpy.ascontiguousarray(img, numpy.float32)

    def _resize(self, img, size):
        """Resize as the weights' training did: Pillow's filter (antialiased when
        shrinking, as torchvision's tensor resize with ``antialias=True``) for
        ``resize_backend='pil'``; otherwise plain bilinear with half-pixel centres, as
        OpenCV's ``INTER_LINEAR``."""
        preset = self.preset
        if preset.resize_backend == 'pil':
            return transforms.resize(img, size, interpolation=preset.interpolation)
        return F.resize_images(img[None], size, mode=preset.interpolation,
                               align_corners=False).array[0]

    def input_size(self, img):
        """(h, w) at which the network sees ``img``: the preset's, or its own."""
        if not self.resize_input:
            return tuple(img.shape[1:])
        size = self.preset.size
        return size if isinstance(size, tuple) else (size, size)

    def _batches(self, imgs, batchsize):
        """Consecutive runs of at most ``batchsize`` images of one input size."""
        batch = []
        for img in imgs:
            full = len(batch) == batchsize
            if batch and (full or self.input_size(batch[0]) != self.input_size(img)):
                yield batch
                batch = []
            batch.append(img)
        if batch:
            yield batch

    def scores_to_label(self, score, size):
        """Turn one image's (1, C, h, w) scores into its (H, W) int32 label map.

        The scores are resized to ``size`` when they differ from it; the label is the
        arg max over the first ``n_class`` channels (extra channels, such as a void
        class the weights were trained with, never win).
        """
        if score.shape[2:] != tuple(size):
            score = F.resize_images(score, size, align_corners=False)
        score = score.array if hasattr(score, 'array') else score
        label = score[0, :self.n_class].argmax(axis=0)
        return backend.to_numpy(label).astype(numpy.int32, copy=False)

    def predict(self, imgs, batchsize=2, runtime='cvzoo'):
        """Label every pixel of each image.

        Args:
            imgs: an iterable of images: (3, H, W) float arrays in [0, 255] RGB, (H, W, 3)
                uint8 arrays, PIL images or file paths.
            batchsize (int): images per forward pass.
            runtime (str): what runs the network between preprocessing and the label
                maps: 'cvzoo' or 'onnxruntime' (see :mod:`cvzoo.models.common.network_runtime`).

        Returns:
            list of numpy.ndarray: one (H, W) int32 map per image, at the image's own
            size, values in [0, n_class).

        Raises:
            cvzoo.errors.UsageError: ``runtime`` is unknown or cannot run this model.
        """
        network_runtime.check_runtime(runtime, self)
        imgs = image_utils.as_chw_images(imgs)
        labels = []
        with self.device, config.using_config('train', False), config.no_backprop_mode():
            for chunk in self._batches(imgs, batchsize):
                x = numpy.stack([self.prepare(img) for img in chunk])
                scores = network_runtime.run_network(
                    self, backend.to_device(x, self.device), runtime)
                for i, img in enumerate(chunk):
                    labels.append(self.scores_to_label(scores[i:i + 1], img.shape[1:]))
        return labels
