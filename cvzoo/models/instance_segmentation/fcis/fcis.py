"""FCIS: the shared predict() of FCIS models (Li et al., CVPR 2017), ChainerCV's rules.

A model is an ``extractor`` (image -> RPN features, head features), an ``rpn``
(Faster R-CNN's, on the first) and a ``head`` (position-sensitive scores of each RoI,
on the second). predict() runs one image at a time, as ChainerCV:

1. resize so that the shorter side is ``min_size`` unless the longer would exceed
   ``max_size``, subtract the RGB mean;
2. run the network in test mode; the RoIs of both head passes (``iter2``) are the
   candidate boxes, kept when both sides are at least ``min_drop_size`` input pixels,
   scaled back to the image and clipped to it;
3. softmax the inside/outside scores (inside probability per bin) and the class
   scores, and merge overlapping candidates by
   :func:`~cvzoo.models.instance_segmentation.fcis.mask_voting.mask_voting`;
4. resize each merged probability grid to its integer box (OpenCV's bilinear rule) and
   keep the pixels ``> binary_thresh``.

Differences from ChainerCV: Pillow's bilinear resize of the input image (the weights
were trained with OpenCV's), and instances by decreasing score (not by class).
"""

import typing

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend
from cvzoo.core.serializers import dictionary
from cvzoo.models.detection import detector
from cvzoo.models.instance_segmentation import instance_segmenter, mask_paste
from cvzoo.models.instance_segmentation.fcis import mask_voting
from cvzoo.transforms.image import resize

FCIS_PRESETS = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.3},
                'evaluate': {'score_thresh': 1e-3, 'nms_thresh': 0.3}}


class FCIS(L.Chain, instance_segmenter.InstanceSegmenter):
    """Extractor, RPN and position-sensitive head, with ChainerCV's pre- and
    post-processing (see the module docstring).

    Args:
        extractor (Link): (B, 3, H, W) -> ``(rpn_features, head_features)``.
        rpn (Link): ``rpn(features, img_size, scales) -> (rpn_locs, rpn_scores, rois,
            roi_indices, anchor)``.
        head (Link): ``head(features, rois, roi_indices, img_size) ->
            (roi_ag_seg_scores, roi_ag_locs, roi_cls_scores, rois, roi_indices)``; has
            ``n_class`` (background included) and ``reset_classes(n_class)``.
        mean (tuple of float): RGB mean subtracted after the resize.
        min_size, max_size (int): the resize rule.
        min_drop_size (float): candidates with a side below this (input pixels) are
            dropped.

    Attributes:
        mask_merge_thresh (float): IoU from which candidates vote for a mask (0.5).
        binary_thresh (float): mask probability threshold (0.4).
        limit (int): about the most instances per image (100).
        label_names (tuple of str or None): class names of the loaded weights.
    """

    presets: typing.ClassVar[dict] = FCIS_PRESETS
    mask_merge_thresh = 0.5
    binary_thresh = 0.4
    limit = 100
    label_names = None

    def __init__(self, extractor, rpn, head, mean, *, min_size=600, max_size=1000,
                 min_drop_size=16):
        super().__init__()
        with self.init_scope():
            self.extractor = extractor
            self.rpn = rpn
            self.head = head
        self.mean = numpy.asarray(mean, numpy.float32).reshape(-1, 1, 1)
        self.min_size, self.max_size = min_size, max_size
        self.min_drop_size = min_drop_size
        self.use_preset('visualize')

    @property
    def n_fg_class(self):
        """Foreground classes (the head also scores the background)."""
        return self.head.n_class - 1

    def forward(self, x, scales=None):
        """(B, 3, H, W) -> the head's outputs: ``roi_ag_seg_scores``, ``roi_ag_locs``,
        ``roi_cls_scores`` Variables, ``rois`` and ``roi_indices`` arrays."""
        img_size = x.shape[2:]
        rpn_features, head_features = self.extractor(x)
        _, _, rois, roi_indices, _ = self.rpn(rpn_features, img_size, scales)
        return self.head(head_features, rois, roi_indices, img_size)

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> resized (see the module docstring), mean subtracted."""
        _, H, W = img.shape
        scale = self.min_size / min(H, W)
        if scale * max(H, W) > self.max_size:
            scale = self.max_size / max(H, W)
        size = (max(int(H * scale), 1), max(int(W * scale), 1))
        return resize.resize(img.astype(numpy.float32, copy=False), size) - self.mean

    def predict(self, imgs, batchsize=1):
        """Segment the instances of each image (see :meth:`InstanceSegmenter.predict`);
        images run one at a time at their own size, whatever ``batchsize``."""
        return super().predict(imgs, 1)

    def training_recipe(self, **hyper):
        """How FCIS trains: ChainerCV's recipe
        (:func:`~cvzoo.models.instance_segmentation.fcis.training_recipe.
        fcis_training_recipe`)."""
        from cvzoo.models.instance_segmentation.fcis import training_recipe

        return training_recipe.fcis_training_recipe(self, **hyper)

    def segment(self, x, sizes, prepared):
        """Merged mask probabilities, boxes, labels and scores of a one-image batch."""
        (H, W), = sizes
        scale = x.shape[3] / W
        seg_scores, _, cls_scores, rois, _ = self.forward(x, [scale])
        instances = self.decode(seg_scores.array, cls_scores.array, rois, (H, W), scale)
        return tuple([value] for value in instances)

    def decode(self, roi_seg_scores, roi_cls_scores, rois, size, scale):
        """The instances of one image from the head's outputs (steps 2 and 3 of the
        module docstring).

        Args:
            roi_seg_scores (array): (R, 2, M, M) outside/inside scores of the RoIs.
            roi_cls_scores (array): (R, n_class) class scores.
            rois (array): (R, 4) float32 RoIs (x_min, y_min, x_max, y_max), input pixels.
            size (tuple of int): the image's (H, W).
            scale (float): input pixels per image pixel.

        Returns:
            tuple: merged ``prob`` (K, M, M), ``bbox`` (K, 4) integer pixel bounds in the
            image, ``label`` (K,) and ``score`` (K,), by decreasing score, on the device.
        """
        H, W = size
        xp = backend.get_array_module(rois)
        large, = detector.to_host(((rois[:, 2:] - rois[:, :2]) >= self.min_drop_size)
                                  .all(axis=1))
        keep = backend.on_device_of(numpy.nonzero(large)[0], rois)
        bbox = xp.clip(rois[keep] / scale, 0, xp.asarray([W, H, W, H], numpy.float32))
        seg_prob = F.softmax(roi_seg_scores[keep], axis=1).array[:, 1]
        cls_prob = F.softmax(roi_cls_scores[keep], axis=1).array
        return mask_voting.mask_voting(
            seg_prob, bbox, cls_prob, (H, W), score_thresh=self.score_thresh,
            nms_thresh=self.nms_thresh, mask_merge_thresh=self.mask_merge_thresh,
            binary_thresh=self.binary_thresh, limit=self.limit)

    def paste_masks(self, prob, bbox, size):
        """Resize each grid to its integer box and keep the pixels ``> binary_thresh``."""
        start = bbox[:, :2].astype(numpy.int64)
        return mask_paste.paste_in_boxes(prob, start, bbox[:, 2:].astype(numpy.int64) - start,
                                         size, self.binary_thresh, inclusive=False)

    def reset_head(self, n_fg_class):
        """Re-make the head's class-dependent layer for ``n_fg_class`` classes."""
        if not isinstance(n_fg_class, int) or isinstance(n_fg_class, bool) or n_fg_class < 1:
            raise ValueError(f'n_fg_class: expected an int >= 1, got {n_fg_class!r}')
        self.head.reset_classes(n_fg_class + 1)
        self.head.to_device(self.device)
        self.label_names = None

    # this model's parameters and persistent arrays, {path without '/': NumPy}
    state_arrays = dictionary.state_arrays
