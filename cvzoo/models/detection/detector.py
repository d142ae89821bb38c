"""Detector: the shared predict() and post-processing of cvzoo's detectors.

A detector class mixes :class:`Detector` into its Chain and provides two hooks:

- ``prepare(img) -> x``: one image, (3, H, W) float32 RGB in [0, 255] on the host, to
  the network's input, (3, H', W') float32 (all images of a batch alike, unless
  ``pad_batch`` pads them to one size);
- ``decode(outputs, sizes) -> (bbox, score)``: from the network's outputs for a batch
  (on the device) to candidate boxes and class scores, still on the device:
  ``bbox`` (B, N, 4) (x_min, y_min, x_max, y_max) in each input image's pixels, or
  (B, N, n_fg_class, 4) with a box per class, and ``score`` (B, N, n_fg_class) in [0, 1].

Two more hooks have defaults: ``pad_batch(prepared)`` stacks the prepared images into
the network's input, and ``detect(x, sizes, prepared)`` is ``decode(forward(x), sizes)``
(Faster R-CNN overrides it: its network takes the images' input scales).

``predict(imgs, runtime='onnxruntime')`` runs ``forward`` in onnxruntime instead
(:mod:`cvzoo.models.common.network_runtime`); ``prepare``, ``decode`` and the rest stay
cvzoo's. A detector that overrides ``detect`` feeds its network more than the batch and
runs in 'cvzoo' only.

The base does the rest, batched over the images of a call and vectorised: keep the
(box, class) pairs whose score is above ``score_thresh``, suppress per image and per
class (greedy NMS at ``nms_thresh``), keep the ``max_detections`` best per image, clip
the boxes to their image, and return NumPy arrays on the host.

On a GPU, predict() runs with the model's device current and reads the device back
twice per batch: the number of pairs above the threshold (``nonzero``) and the pairs
themselves, in one transfer (:func:`to_host`); the greedy NMS, the top-k and the split
per image then run on the host (:func:`per_image_detections`), as the results go there
anyway.
"""

import typing

import numpy

from cvzoo.core import backend, config
from cvzoo.models.common import network_runtime, threshold_presets
from cvzoo.utils import image as image_utils
from cvzoo.utils import nms


class Detector(threshold_presets.ThresholdPresets):
    """Mixin with predict(), use_preset() and the post-processing; see the module docstring.

    Class attributes a subclass sets:
        presets (dict): preset name -> {'score_thresh': float, 'nms_thresh': float},
            with at least 'visualize' and 'evaluate'.
        max_detections (int or None): detections kept per image (after NMS).
        inclusive_score_thresh (bool): keep scores equal to ``score_thresh`` too (as
            ChainerCV's SSD, YOLO and FPN models); False keeps only scores above it.
        box_convention (str): how the boxes the network learned end, from the weights
            entry (``Weights.box_convention``, set when they load): 'continuous' or
            'inclusive' (x_max, y_max one less, as ChainerCV's and Darknet's VOC boxes).
            predict() returns continuous boxes either way (:func:`as_continuous`).
        later_candidate_wins_ties (bool): among equal scores the NMS visits the later
            candidate first (ChainerCV's Faster R-CNN VGG16); False: the earlier one.
        runtimes (tuple of str): what predict() can run the network in (all of
            ``network_runtime.RUNTIMES``; only 'cvzoo' for a subclass with its own
            ``detect()``, set automatically).
    """

    runtimes = network_runtime.RUNTIMES

    presets: typing.ClassVar[dict] = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.45},
               'evaluate': {'score_thresh': 0.01, 'nms_thresh': 0.45}}
    max_detections = None
    inclusive_score_thresh = False
    box_convention = 'continuous'
    later_candidate_wins_ties = False
    score_thresh = 0.7
    nms_thresh = 0.45

    def prepare(self, img):
        """Preprocess one (3, H, W) float32 image for the network (subclass hook)."""
        raise NotImplementedError(f'{type(self).__name__} does not implement prepare')

    def decode(self, outputs, sizes):
        """Candidate boxes and scores of a batch (subclass hook); see the module docstring."""
        raise NotImplementedError(f'{type(self).__name__} does not implement decode')

    def pad_batch(self, prepared):
        """The prepared images of a batch as one (B, 3, H', W') NumPy array (hook)."""
        return numpy.stack(prepared)

    def detect(self, x, sizes, prepared):
        """Candidate ``(bbox, score)`` of the batch ``x`` on the device (hook): the
        network's outputs decoded; ``prepared`` are the images before pad_batch."""
        return self.decode(self.forward(x), sizes)

    def predict(self, imgs, batchsize=8, runtime='cvzoo'):
        """Detect objects in each image.

        Args:
            imgs: an iterable of images: (3, H, W) float arrays RGB in [0, 255], (H, W, 3)
                uint8 arrays, PIL images or file paths.
            batchsize (int): images per forward pass.
            runtime (str): what runs the network between ``prepare`` and ``decode``:
                'cvzoo' or 'onnxruntime' (see :mod:`cvzoo.models.common.network_runtime`).

        Returns:
            tuple of three lists, one entry per image, NumPy on the host:

            bboxes  (R, 4) float32  (x_min, y_min, x_max, y_max) in the image's pixels
            labels  (R,) int32      class ids in [0, n_fg_class)
            scores  (R,) float32    confidences, decreasing

        Raises:
            cvzoo.errors.UsageError: ``runtime`` is unknown or cannot run this model.

        >>> from cvzoo.models import get_model
        >>> from cvzoo.models.weights import embedded
        >>> model = get_model('yolo_fastest_xl', pretrained_model='voc')  # shipped: offline
        >>> bboxes, labels, scores = model.predict([embedded.sample_image_path()])
        >>> [model.label_names[i] for i in labels[0][:3]]
        ['car', 'bicycle', 'dog']
        """
        network_runtime.check_runtime(runtime, self)
        imgs = image_utils.as_chw_images(imgs)
        bboxes, labels, scores = [], [], []
        for start in range(0, len(imgs), batchsize):
            chunk = imgs[start:start + batchsize]
            sizes = [img.shape[1:] for img in chunk]
            prepared = [self.prepare(img) for img in chunk]
            x = backend.to_device(self.pad_batch(prepared), self.device)
            with self.device, config.using_config('train', False), \
                    config.no_backprop_mode():
                if runtime == 'cvzoo':
                    bbox, score = self.detect(x, sizes, prepared)
                else:
                    bbox, score = self.decode(
                        network_runtime.run_network(self, x, runtime), sizes)
                result = self.suppress(bbox, score, sizes)
            bboxes += [as_continuous(bbox, size, self.box_convention)
                       for bbox, size in zip(result[0], sizes)]
            labels += result[1]
            scores += result[2]
        return bboxes, labels, scores

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a detector with its own detect() feeds its network more than the image batch
        if 'detect' in cls.__dict__ and 'runtimes' not in cls.__dict__:
            cls.runtimes = ('cvzoo',)

    def suppress(self, bbox, score, sizes):
        """Threshold, per-class NMS, top-k and clipping of a batch (:func:`suppress`
        with this detector's thresholds)."""
        return suppress(self, bbox, score, sizes)


def suppress(model, bbox, score, sizes):
    """Threshold, per-class NMS, top-k and clipping of a batch, on the device.

    The detection rule of every box detector, also called by the models that detect
    boxes before another head (Mask and Keypoint R-CNN).

    Args:
        model: gives the rule: ``score_thresh``, ``nms_thresh``,
            ``inclusive_score_thresh``, ``later_candidate_wins_ties`` and
            ``max_detections`` (as :class:`Detector`'s attributes).
        bbox (array): (B, N, 4) candidate boxes in image pixels, or (B, N, C, 4) with
            a box per class.
        score (array): (B, N, C) class scores.
        sizes (list of (H, W)): the images' sizes.

    Returns:
        tuple of three lists of NumPy arrays, as predict() returns them.
    """
    xp = backend.get_array_module(bbox, score)
    B, _, n_fg_class = score.shape
    # NOTE: by default strictly above the threshold, as Darknet; score_thresh=1.0 then
    # gives nothing.
    passed = score >= model.score_thresh if model.inclusive_score_thresh else \
        score > model.score_thresh
    image_index, box_index, label = xp.nonzero(passed)
    if model.later_candidate_wins_ties:
        image_index, box_index, label = image_index[::-1], box_index[::-1], label[::-1]
    candidate = bbox[image_index, box_index, label] if bbox.ndim == 4 else \
        bbox[image_index, box_index]
    limits = numpy.asarray([[W, H, W, H] for H, W in sizes], dtype=bbox.dtype)
    return per_image_detections(
        image_index, candidate, score[image_index, box_index, label],
        label, B, n_fg_class, model.nms_thresh, model.max_detections, limits)


def as_continuous(bbox, size, box_convention):
    """Host boxes of a model in ``box_convention`` as continuous boxes inside the image.

    An inclusive box's (x_max, y_max) is its last pixel, not the edge after it (ChainerCV
    and Darknet read a VOC ``xmax`` so; cvzoo's datasets and metrics do not). It is
    clipped to the image's pixel indices and 1 is added to x_max and y_max: so cvzoo's
    VOC metric on the result equals ChainerCV's (which adds that 1 itself) on the boxes
    clipped the same way. Continuous boxes come back as they are.

    Args:
        bbox (numpy.ndarray): (R, 4) float32 (x_min, y_min, x_max, y_max), clipped to the
            image.
        size (tuple): the image's (H, W).
        box_convention (str): 'continuous' or 'inclusive'.

    Returns:
        numpy.ndarray: (R, 4) float32 continuous boxes inside the image.

    >>> as_continuous(numpy.array([[0, 2, 9, 5]], numpy.float32), (6, 10), 'inclusive')
    array([[ 0.,  2., 10.,  6.]], dtype=float32)
    """
    if box_convention == 'continuous':
        return bbox
    if box_convention != 'inclusive':
        raise ValueError(f"box_convention: expected 'continuous' or 'inclusive', got "
                         f'{box_convention!r}')
    H, W = size
    bbox = numpy.clip(bbox, 0, numpy.array([W - 1, H - 1, W - 1, H - 1], bbox.dtype))
    return bbox + numpy.array([0, 0, 1, 1], bbox.dtype)


def to_host(*arrays):
    """Copy arrays of one device to the host in one transfer (one host sync on a GPU).

    The arrays, of any shapes, travel flattened and concatenated in one float64 array
    and come back in their own shapes and dtypes: exact for float32/float64 values, bools
    and integers below 2 ** 53. NumPy arrays are returned as they are.

    Returns:
        tuple of NumPy arrays, in the order given.

    >>> a, b = to_host(numpy.arange(3), numpy.ones((2, 4), numpy.float32))
    >>> a.dtype, b.shape
    (dtype('int64'), (2, 4))
    """
    xp = backend.get_array_module(*arrays)
    if xp is numpy:
        return arrays
    packed = backend.to_numpy(xp.concatenate([array.astype(xp.float64).reshape(-1)
                                               for array in arrays]))
    bounds = numpy.cumsum([0] + [array.size for array in arrays])
    return tuple(packed[bounds[i]:bounds[i + 1]].reshape(array.shape).astype(array.dtype)
                 for i, array in enumerate(arrays))


def per_image_detections(image_index, bbox, score, label, n_image, n_fg_class, nms_thresh,
                         max_detections=None, limits=None):
    """The detections of a batch from its candidate (box, class) pairs, on the host.

    The pairs are read back from the device once (:func:`to_host`), then suppressed per
    image and per class (greedy NMS at ``nms_thresh``), grouped by image with at most
    ``max_detections`` each (best first), clipped to ``limits`` and split per image.

    Args:
        image_index (array): (P,) int, the image of each pair.
        bbox (array): (P, 4) boxes.
        score (array): (P,) scores.
        label (array): (P,) int class ids in ``[0, n_fg_class)``.
        n_image (int): images of the batch.
        n_fg_class (int): classes.
        nms_thresh (float): IoU threshold of the NMS.
        max_detections (int or None): detections kept per image.
        limits (numpy.ndarray or None): (n_image, 4) ``(W, H, W, H)`` to clip to.

    Returns:
        tuple of three lists of NumPy arrays, as predict() returns them.
    """
    image_index, bbox, score, label = to_host(image_index, bbox, score, label)
    group = image_index * n_fg_class + label
    kept = nms.batched_non_maximum_suppression(bbox, score, group, nms_thresh)
    kept = best_per_image(kept, image_index[kept], max_detections)
    bbox = bbox[kept]
    if limits is not None:
        bbox = numpy.clip(bbox, 0, limits[image_index[kept]])
    return _split_per_image(image_index[kept], n_image, bbox, label[kept], score[kept])


def best_per_image(kept, image_index, limit):
    """Host ``kept`` (sorted by decreasing score) grouped by its ``image_index``, in the
    given order within an image, at most ``limit`` (None: all) per image.

    >>> best_per_image(numpy.array([4, 7, 5, 6]), numpy.array([1, 0, 1, 1]), 2)
    array([7, 4, 5])
    """
    order = numpy.argsort(image_index, kind='stable')
    kept, image_index = kept[order], image_index[order]
    if limit is None or len(kept) == 0:
        return kept
    first = numpy.searchsorted(image_index, image_index, side='left')
    rank = numpy.arange(len(kept)) - first
    return kept[rank < limit]


def _split_per_image(image_index, n_image, bbox, label, score):
    """Split host arrays sorted by image into per-image lists."""
    bounds = numpy.searchsorted(image_index, numpy.arange(n_image + 1), side='left')
    bboxes, labels, scores = [], [], []
    for i in range(n_image):
        part = slice(bounds[i], bounds[i + 1])
        bboxes.append(bbox[part].astype(numpy.float32, copy=False))
        labels.append(label[part].astype(numpy.int32))
        scores.append(score[part].astype(numpy.float32, copy=False))
    return bboxes, labels, scores
