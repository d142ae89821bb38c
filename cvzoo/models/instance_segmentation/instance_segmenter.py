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
models override it). The base batches the images
(:class:`~cvzoo.models.common.prepared_batches.PreparedBatches`: test mode without backprop,
the model's device current), pastes on the device and returns NumPy arrays on the host.
"""

import numpy

from cvzoo.models.common import prepared_batches, threshold_presets
from cvzoo.models.instance_segmentation import mask_paste


class InstanceSegmenter(threshold_presets.RCNNThresholdPresets, prepared_batches.PreparedBatches):
    """Mixin with predict() and use_preset() (the R-CNN presets unless a subclass sets
    ``presets``); see the module docstring."""

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
        masks, labels, scores = [], [], []
        for x, sizes, prepared in self.prepared_batches(imgs, batchsize):
            probs, bboxes, chunk_labels, chunk_scores = self.segment(x, sizes, prepared)
            masks += prepared_batches.to_host(
                [self.paste_masks(prob, bbox, size)
                 for prob, bbox, size in zip(probs, bboxes, sizes)], bool)
            labels += prepared_batches.to_host(chunk_labels, numpy.int32)
            scores += prepared_batches.to_host(chunk_scores, numpy.float32)
        return masks, labels, scores
