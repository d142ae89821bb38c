"""FasterRCNN: the shared predict() of Faster R-CNN detectors (Ren et al., NeurIPS 2015).

A model is an ``extractor`` (image -> feature map(s)), an ``rpn`` (feature -> RoIs) and
a ``head`` (feature, RoIs -> per-class offsets and class scores). predict() does, as
ChainerCV: resize each image so that its shorter side is ``min_size`` unless the longer
would exceed ``max_size``, subtract the RGB mean, run the network in test mode, decode
each RoI's offsets per class (times ``loc_normalize_std``), clip to the image, softmax
the scores and, per class, keep the boxes scoring above ``score_thresh`` (at or above
for FPN models, as ChainerCV's) and suppress at IoU >= ``nms_thresh``. Boxes come back
in each input image's pixels, x first.

Differences from ChainerCV: Pillow's bilinear resize (the weights were trained with
OpenCV's), detections sorted by decreasing score instead of by class, and the
post-processing batched over the images of a call.
"""

import typing

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.serializers import dictionary
from cvzoo.models.detection import box_coding, detector
from cvzoo.transforms.image import resize

FASTER_RCNN_PRESETS = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.3},
                       'evaluate': {'score_thresh': 0.05, 'nms_thresh': 0.3}}
# the head's offsets are ``loc * std + mean`` in (dx, dy, dw, dh)
LOC_NORMALIZE_MEAN = (0.0, 0.0, 0.0, 0.0)
LOC_NORMALIZE_STD = (0.1, 0.1, 0.2, 0.2)


class FasterRCNN(L.Chain, detector.Detector):
    """Extractor, RPN and RoI head, with ChainerCV's pre- and post-processing.

    Args:
        extractor (Link): (B, 3, H, W) -> feature map(s).
        rpn (Link): ``rpn(features, img_size, scales) -> (rpn_locs, rpn_scores, rois,
            roi_indices, anchor)``.
        head (Link): ``head(features, rois, roi_indices) -> (roi_cls_locs (R, n_class *
            4), roi_scores (R, n_class))`` in the RoIs' order; has ``n_class``
            (background included) and ``reset_classes(n_class)``.
        mean (tuple of float): RGB mean subtracted after the resize.
        min_size, max_size (int): the resize rule (see the module docstring).
        loc_normalize_mean, loc_normalize_std (tuple of float): the head's offsets are
            ``loc * std + mean`` in (dx, dy, dw, dh).

    Attributes:
        label_names (tuple of str or None): class names of the loaded weights.
    """

    presets: typing.ClassVar[dict] = FASTER_RCNN_PRESETS
    # input sides are padded to a multiple of this to batch images; None runs the
    # images one by one at their own size (ChainerCV's VGG16 model does)
    pad_stride = None
    # upper bound of dw, dh before exp() when decoding the head's offsets
    exp_clip = None
    # Among equal scores, ChainerCV's VGG16 model (a reversed argsort) lets the NMS visit
    # the later RoI first (later_candidate_wins_ties), its FPN models (argsort of -score)
    # the earlier one. Equal scores are common: nearby RoIs that max-pool the same feature
    # bins score alike.
    label_names = None

    def __init__(self, extractor, rpn, head, mean, *, min_size=600, max_size=1000,
                 loc_normalize_mean=LOC_NORMALIZE_MEAN, loc_normalize_std=LOC_NORMALIZE_STD):
        super().__init__()
        with self.init_scope():
            self.extractor = extractor
            self.rpn = rpn
            self.head = head
        self.mean = numpy.asarray(mean, numpy.float32).reshape(-1, 1, 1)
        self.min_size, self.max_size = min_size, max_size
        self.loc_normalize_mean = tuple(loc_normalize_mean)
        self.loc_normalize_std = tuple(loc_normalize_std)
        self.use_preset('visualize')

    @property
    def n_fg_class(self):
        """Foreground classes (the head also scores the background)."""
        return self.head.n_class - 1

    def forward(self, x, scales=None):
        """(B, 3, H, W) -> ``roi_cls_locs`` (R, n_class * 4), ``roi_scores`` (R, n_class)
        Variables, ``rois`` (R, 4) and ``roi_indices`` (R,) arrays."""
        return run_heads(self, self.extractor(x), x.shape[2:], scales)

    def resize_scale(self, size):
        """The factor prepare() resizes an image of ``size`` (H, W) by (:func:`resize_scale`)."""
        return resize_scale(self, size)

    def input_scales(self, sizes, prepared):
        """Per image, input pixels per image pixel, the factor decode() divides RoIs by.

        As ChainerCV's FasterRCNN: the prepared width over the original one (the
        resize's integer rounding included). ``sizes`` are the images' (H, W),
        ``prepared`` their prepare() arrays.
        """
        return [x.shape[2] / size[1] for x, size in zip(prepared, sizes)]

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> resized (see the module docstring), mean subtracted."""
        return prepare(self, img)

    def predict(self, imgs, batchsize=8, runtime='cvzoo'):
        """Detect objects in each image; see :meth:`Detector.predict` for the arrays.

        Images run ``batchsize`` at a time, zero-padded to a common size when the model
        has a ``pad_stride`` (FPN), else one by one at their own size. Only
        ``runtime='cvzoo'``: the second stage crops regions the first one chose.
        """
        return super().predict(imgs, batchsize if self.pad_stride else 1, runtime)

    def pad_batch(self, prepared):
        """Prepared images -> (B, 3, H, W) NumPy batch (:func:`pad_batch`)."""
        return pad_batch(self, prepared)

    def detect(self, x, sizes, prepared):
        """Candidate per-class boxes and scores of the batch ``x`` (see :meth:`decode`):
        the RPN and decode() take each image's input scale (:meth:`input_scales`)."""
        scales = self.input_scales(sizes, prepared)
        return self.decode(self.forward(x, scales), sizes, scales)

    def decode(self, outputs, sizes, scales):
        """Per-class boxes in image pixels and class scores of a batch, on the device.

        Returns:
            tuple: ``bbox`` (B, N, n_fg_class, 4) clipped to each image and ``score``
            (B, N, n_fg_class), N the most RoIs of an image (missing ones score 0).
        """
        return decode(self, outputs, sizes, scales)

    def training_recipe(self, **hyper):
        """How this detector trains: a ``TrainingRecipe``, ``faster_rcnn_vgg16_training_recipe`` of
        :mod:`~cvzoo.models.detection.faster_rcnn.training_recipe`."""
        from cvzoo.models.detection.faster_rcnn import training_recipe
        return training_recipe.faster_rcnn_vgg16_training_recipe(self, **hyper)

    def reset_head(self, n_fg_class):
        """Re-make the head's class-dependent layers for ``n_fg_class`` classes."""
        reset_head(self, n_fg_class)

    # this model's parameters and persistent arrays, {path without '/': NumPy}
    state_arrays = dictionary.state_arrays


# The rules of ChainerCV's two-stage R-CNNs, as functions of a ``model`` that has the
# parts (``extractor``, ``rpn``, ``head``) and the settings of :class:`FasterRCNN`
# (``mean``, ``min_size``, ``max_size``, ``pad_stride``, ``exp_clip``,
# ``loc_normalize_mean``, ``loc_normalize_std`` and the thresholds): FasterRCNN calls
# them, and so do the models that hold the same parts with a further head (Mask R-CNN).

def run_heads(model, features, img_size, scales):
    """The RPN and the box head on ``features`` of a batch of ``img_size`` (H, W):
    ``roi_cls_locs`` (R, n_class * 4), ``roi_scores`` (R, n_class) Variables, ``rois``
    (R, 4) and ``roi_indices`` (R,) arrays."""
    _, _, rois, roi_indices, _ = model.rpn(features, img_size, scales)
    roi_cls_locs, roi_scores = model.head(features, rois, roi_indices)
    return roi_cls_locs, roi_scores, rois, roi_indices


def detections(model, features, img_size, sizes, scales):
    """Per image ``(bboxes, labels, scores)`` (host arrays, boxes in image pixels) of a
    batch's ``features``: the heads (:func:`run_heads`), :func:`decode` and the
    detector's suppression (:func:`~cvzoo.models.detection.detector.suppress`)."""
    outputs = run_heads(model, features, img_size, scales)
    bbox, score = decode(model, outputs, sizes, scales)
    return detector.suppress(model, bbox, score, sizes)


def resize_scale(model, size):
    """The factor an image of ``size`` (H, W) is resized by: its shorter side to
    ``model.min_size``, unless the longer side would pass ``model.max_size``."""
    H, W = size
    scale = model.min_size / min(H, W)
    if scale * max(H, W) > model.max_size:
        scale = model.max_size / max(H, W)
    return scale


def prepare(model, img):
    """(3, H, W) RGB in [0, 255] -> resized by :func:`resize_scale`, ``model.mean``
    subtracted."""
    _, H, W = img.shape
    scale = resize_scale(model, (H, W))
    size = (max(int(H * scale), 1), max(int(W * scale), 1))
    img = resize.resize(img.astype(numpy.float32, copy=False), size)
    return img - model.mean


def pad_batch(model, prepared):
    """Prepared images -> (B, 3, H, W) NumPy batch, zero-padded at the bottom and right
    to multiples of ``model.pad_stride`` (no padding without one: images alike in size)."""
    if not model.pad_stride:
        return numpy.stack(prepared)
    size = numpy.max([x.shape[1:] for x in prepared], axis=0)
    size = -(-size // model.pad_stride) * model.pad_stride
    x = numpy.zeros((len(prepared), 3, size[0], size[1]), numpy.float32)
    for i, img in enumerate(prepared):  # NOTE: a copy per image of the batch
        x[i, :, :img.shape[1], :img.shape[2]] = img
    return x


def decode(model, outputs, sizes, scales):
    """Per-class boxes in image pixels and class scores of a batch, on the device
    (:meth:`FasterRCNN.decode`)."""
    roi_cls_locs, roi_scores, rois, roi_indices = outputs
    xp = backend.get_array_module(rois)
    n_class = model.head.n_class
    std = xp.asarray(model.loc_normalize_std, numpy.float32)
    mean = xp.asarray(model.loc_normalize_mean, numpy.float32)
    loc = roi_cls_locs.array.reshape(-1, n_class, 4) * std + mean
    roi = rois / xp.asarray(scales, numpy.float32)[roi_indices][:, None]
    bbox = box_coding.decode(roi[:, None, :], loc, exp_clip=model.exp_clip)[:, 1:]
    limits = xp.asarray([[W, H, W, H] for H, W in sizes], numpy.float32)
    bbox = xp.clip(bbox, 0, limits[roi_indices][:, None, :])
    prob = F.softmax(roi_scores, axis=1).array[:, 1:]
    return _pad_per_image(xp, roi_indices, len(sizes), bbox, prob)


def reset_head(model, n_fg_class):
    """Re-make ``model.head``'s class-dependent layers for ``n_fg_class`` classes (the
    label names are dropped)."""
    if not isinstance(n_fg_class, int) or isinstance(n_fg_class, bool) or n_fg_class < 1:
        raise ValueError(f'n_fg_class: expected an int >= 1, got {n_fg_class!r}')
    model.head.reset_classes(n_fg_class + 1)
    model.head.to_device(model.device)
    model.label_names = None


def _pad_per_image(xp, roi_indices, n_image, bbox, prob):
    """Scatter (R, ...) per-RoI rows, sorted by image, into (B, N, ...) with zero rows."""
    first = xp.searchsorted(roi_indices, xp.arange(n_image), side='left')
    if n_image == 1:
        n_max = len(roi_indices)  # known without reading the device
    else:
        counts = xp.bincount(roi_indices, minlength=n_image) if len(roi_indices) else \
            xp.zeros(n_image, numpy.int64)
        n_max = int(counts.max()) if n_image else 0
    rank = xp.arange(len(roi_indices)) - first[roi_indices]
    padded_bbox = xp.zeros((n_image, n_max) + bbox.shape[1:], bbox.dtype)
    padded_prob = xp.zeros((n_image, n_max) + prob.shape[1:], prob.dtype)
    padded_bbox[roi_indices, rank] = bbox
    padded_prob[roi_indices, rank] = prob
    return padded_bbox, padded_prob


def convert_chainercv(model, raw, name_map, loc_keys):
    """Map a ChainerCV-named file onto ``model``'s arrays, permuting loc heads to x-first.

    Args:
        model (FasterRCNN): gives the expected keys and, for keys the file lacks on
            purpose (a backbone file), their current values.
        raw (dict): the file's arrays.
        name_map (callable): file key (no leading '/') -> model key, or None for a key
            consumed on purpose without use (a classifier's last layer).
        loc_keys (tuple of str): model keys of (n * 4, ...) offset layers whose
            channels go from (dy, dx, dh, dw) to (dx, dy, dw, dh).

    Returns:
        dict: model key -> NumPy array.

    Raises:
        cvzoo.errors.WeightLoadError: file keys that map to nothing (all named).
    """
    expected = model.state_arrays()
    arrays, leftover = {}, []
    for key, value in raw.items():
        name = name_map(key.removeprefix('/'))
        if name is None:
            continue
        if name not in expected:
            leftover.append(key)
        elif name in loc_keys:
            arrays[name] = box_coding.swap_xy_channels(value)
        else:
            arrays[name] = value
    if leftover:
        raise errors.WeightLoadError(
            f'{type(model).__name__}.convert_weights: keys of the ChainerCV file that this '
            f'model does not have: {sorted(leftover)}')
    return arrays

