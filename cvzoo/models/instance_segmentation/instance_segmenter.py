"""InstanceSegmenter: the shared predict() of cvzoo's instance segmentation models.

A model mixes :class:`InstanceSegmenter` into its Chain and provides three hooks:

- ``prepare(img) -> x``: one image, (3, H, W) float32 RGB in [0, 255] on the host, to
  the network's input (3, H', W') float32 on the host;
- ``pad_batch(prepared) -> x``: the prepared images of a batch as one (B, 3, H', W')
  NumPy array (default: stacked; models taking several sizes pad);
- ``segment(x, sizes, prepared) -> (probs, bboxes, labels, scores)``: the network on
  the batch ``x`` (on the device) and its decoding, per image lists: ``prob`` (R, M, M)
  float mask probabilities over each instance's box (on the device), ``bbox`` (R, 4)
  (x_min, y_min, x_max, y_max) in the image's own pixels, ``label`` (R,) int in
  ``[0, n_fg_class)`` and ``score`` (R,) decreasing (host or device arrays).

One more hook has a default: ``paste_masks(prob, bbox, size)`` turns an image's
probabilities into (R, H, W) bool masks at its size (ChainerCV's rule,
:func:`cvzoo.models.instance_segmentation.mask_paste.paste_masks`; torchvision's
models override it). The base batches the images, runs the hooks in test mode without
backprop with the model's device current, pastes on the device and returns NumPy
arrays on the host.
"""

import typing

import numpy

from cvzoo.core import backend, config
from cvzoo.models import threshold_presets
from cvzoo.models.instance_segmentation import mask_paste
from cvzoo.utils import image as image_utils

INSTANCE_SEGMENTATION_PRESETS = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.5},
                                 'evaluate': {'score_thresh': 0.05, 'nms_thresh': 0.5}}


class InstanceSegmenter(threshold_presets.ThresholdPresets):
    """Mixin with predict() and use_preset(); see the module docstring.

    Class attributes a subclass sets:
        presets (dict): preset name -> {'score_thresh': float, 'nms_thresh': float},
            with at least 'visualize' and 'evaluate'.
    """

    presets: typing.ClassVar[dict] = INSTANCE_SEGMENTATION_PRESETS
    score_thresh = 0.7
    nms_thresh = 0.5

    def prepare(self, img):
        """Preprocess one (3, H, W) float32 image for the network (subclass hook)."""
        raise NotImplementedError(f'{type(self).__name__} does not implement prepare')

    def pad_batch(self, prepared):
        """The prepared images of a batch as one (B, 3, H', W') NumPy array (hook)."""
        return numpy.stack(prepared)

    def segment(self, x, sizes, prepared):
        """Per image ``(probs, bboxes, labels, scores)`` of the batch ``x`` (subclass
        hook); see the module docstring."""
        raise NotImplementedError(f'{type(self).__name__} does not implement segment')

    def paste_masks(self, prob, bbox, size):
        """(R, M, M) probabilities over boxes -> (R, H, W) bool masks of an image of
        ``size``, on ``prob``'s device (hook; ChainerCV's rule by default)."""
        return mask_paste.paste_masks(prob, bbox, size)

    def predict(self, imgs, batchsize=8):
        """Segment the object instances of each image.

        Args:
            imgs: an iterable of images: (3, H, W) float arrays RGB in [0, 255], (H, W, 3)
                uint8 arrays, PIL images or file paths.
            batchsize (int): images per forward pass.

        Returns:
            tuple of three lists, one entry per image, NumPy on the host:

            masks   (R, H, W) bool  one mask per instance, at the image's size
            labels  (R,) int32      class ids in [0, n_fg_class)
            scores  (R,) float32    confidences, decreasing

        For example (``get_model('mask_rcnn_fpn_resnet50', pretrained_model='coco')``
        downloads its weights)::

            masks, labels, scores = model.predict([read_image('dog.jpg')])
        """
        if not isinstance(batchsize, int) or batchsize < 1:
            raise ValueError(f'batchsize: expected an int >= 1, got {batchsize!r}')
        imgs = [image_utils.as_chw_image(img) for img in imgs]
        masks, labels, scores = [], [], []
        for start in range(0, len(imgs), batchsize):
            chunk = imgs[start:start + batchsize]
            sizes = [img.shape[1:] for img in chunk]
            prepared = [self.prepare(img) for img in chunk]
            x = backend.to_device(self.pad_batch(prepared), self.device)
            with self.device, config.using_config('train', False), \
                    config.no_backprop_mode():
                probs, bboxes, chunk_labels, chunk_scores = self.segment(x, sizes, prepared)
                pasted = [self.paste_masks(prob, bbox, size)
                          for prob, bbox, size in zip(probs, bboxes, sizes)]
            masks += [backend.to_numpy(mask).astype(bool, copy=False) for mask in pasted]
            labels += [backend.to_numpy(label).astype(numpy.int32, copy=False)
                       for label in chunk_labels]
            scores += [backend.to_numpy(score).astype(numpy.float32, copy=False)
                       for score in chunk_scores]
        return masks, labels, scores
