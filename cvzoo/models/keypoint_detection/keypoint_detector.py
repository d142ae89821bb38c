"""KeypointDetector: the shared predict() of cvzoo's keypoint detection models.

A model mixes :class:`KeypointDetector` into its Chain and provides three hooks:

- ``prepare(img) -> x``: one image, (3, H, W) float32 RGB in [0, 255] on the host, to
  the network's input (3, H', W') float32 on the host;
- ``pad_batch(prepared) -> x``: the prepared images of a batch as one (B, 3, H', W')
  NumPy array (default: stacked);
- ``detect_points(x, sizes, prepared) -> (bboxes, points, point_scores, labels,
  scores)``: the network on the batch ``x`` (on the device) and its decoding, per image
  lists: ``bbox`` (R, 4) (x_min, y_min, x_max, y_max) and ``point`` (R, K, 2) (x, y) in
  the image's own pixels, ``point_score`` (R, K), ``label`` (R,) int in
  ``[0, n_fg_class)`` and ``score`` (R,) decreasing (host or device arrays).

The base batches the images (:class:`~cvzoo.models.common.prepared_batches.PreparedBatches`:
test mode without backprop, the model's device current) and returns NumPy arrays on the
host: :meth:`predict` the
contract's four lists, :meth:`predict_with_bboxes` the instances' boxes too.
"""

import numpy

from cvzoo.models.common import prepared_batches, threshold_presets


class KeypointDetector(threshold_presets.RCNNThresholdPresets, prepared_batches.PreparedBatches):
    """Mixin with predict() and use_preset() (the R-CNN presets unless a subclass sets
    ``presets``); see the module docstring."""

    def detect_points(self, x, sizes, prepared):
        """Per image ``(bboxes, points, point_scores, labels, scores)`` of the batch ``x``
        (subclass hook); see the module docstring."""
        raise NotImplementedError(f'{type(self).__name__} does not implement detect_points')

    def predict(self, imgs, batchsize=8):
        """Detect the instances of each image and their keypoints.

        Args:
            imgs: an iterable of images: (3, H, W) float arrays RGB in [0, 255], (H, W, 3)
                uint8 arrays, PIL images or file paths.
            batchsize (int): images per forward pass.

        Returns:
            tuple of four lists, one entry per image, NumPy on the host:

            points        (R, K, 2) float32  (x, y) of each instance's K keypoints, in
                                             the image's pixels
            point_scores  (R, K) float32     the keypoints' scores
            labels        (R,) int32         class ids in [0, n_fg_class)
            scores        (R,) float32       the instances' confidences, decreasing

        For example (``get_model('keypointrcnn_resnet50_fpn', pretrained_model='coco')``
        downloads its weights)::

            points, point_scores, labels, scores = model.predict([read_image('dog.jpg')])
        """
        return self.predict_with_bboxes(imgs, batchsize)[1:]

    def predict_with_bboxes(self, imgs, batchsize=8):
        """:meth:`predict`'s four lists after the instances' boxes: per image (R, 4)
        float32 (x_min, y_min, x_max, y_max) in the image's pixels."""
        results = ([], [], [], [], [])
        dtypes = (numpy.float32, numpy.float32, numpy.float32, numpy.int32, numpy.float32)
        for x, sizes, prepared in self.prepared_batches(imgs, batchsize):
            outputs = self.detect_points(x, sizes, prepared)
            for result, output, dtype in zip(results, outputs, dtypes):
                result += prepared_batches.to_host(output, dtype)
        return results
