"""mask_voting: FCIS's post-processing, ChainerCV's rules batched over instances.

Given each RoI's box, mask probabilities on a small grid over it and class
probabilities, as ChainerCV's ``mask_voting``:

1. per foreground class, greedy NMS of all RoIs by that class's probability
   (IoU >= ``nms_thresh`` suppresses; among equal probabilities the later RoI first);
2. the kept (box, class) pairs score at least ``score_thresh`` and at least the
   ``limit``-th best kept score;
3. each kept pair votes: the RoIs whose boxes overlap its box with IoU >=
   ``mask_merge_thresh`` add their binary masks (grid resized to the rounded box,
   ``>= binary_thresh``), weighted by their probability of the pair's class normalised
   to sum 1, into an image-sized map;
4. the pixels of the map ``>= binary_thresh`` give the instance's box (integer pixel
   bounds); the map cropped to that box, resized to the grid's size and clipped to
   [0, 1], is the instance's mask probability. A pair whose map reaches the threshold
   nowhere is dropped.

The RoIs' binary masks come from one batched paste
(:func:`~cvzoo.models.instance_segmentation.mask_paste.paste_in_boxes`), cut into
bands of image rows; the votes of all pairs are one matrix product per band; the
crops are resized by per-instance interpolation matrices (OpenCV's bilinear rule, as
the weights were trained with). No Python step per instance or per pixel.

Differences from ChainerCV: instances are returned by decreasing score (ChainerCV:
by class, then score; equal scores keep ChainerCV's order: by class, and within a class
the later RoI first).
"""

import numpy

from cvzoo.core import backend
from cvzoo.models.detection import detector
from cvzoo.models.instance_segmentation import mask_paste
from cvzoo.utils import bbox as bbox_utils
from cvzoo.utils import nms

# elements of the float32 (R, rows, W) binary masks of one band of image rows
_BAND_ELEMENTS = 8 * 2 ** 20


def select_pairs(bbox, cls_prob, score_thresh, nms_thresh, limit):
    """Steps 1 and 2: the kept (RoI, class) pairs, best score first.

    Args:
        bbox (array): (R, 4) float boxes (x_min, y_min, x_max, y_max).
        cls_prob (array): (R, n_class) class probabilities, background first.
        score_thresh, nms_thresh (float): as in :func:`mask_voting`.
        limit (int): at most about this many pairs (ties at the last score stay).

    Returns:
        tuple: ``roi`` (K,) int index of the RoI, ``label`` (K,) int foreground class
        (0-based), ``score`` (K,) float, on ``bbox``'s device.
    """
    R, n_class = cls_prob.shape
    # NOTE: the NMS and the selection, whose sizes depend on the data, run on the host
    # after one transfer (one host sync on a GPU)
    host_bbox, host_prob = detector.to_host(bbox, cls_prob)
    # NOTE: the RoIs in reverse, so that among equal scores the NMS visits the later RoI
    # first, as ChainerCV's reversed argsort does where NumPy's sort keeps ties in order
    fg_score = host_prob[::-1, 1:].T.ravel()
    label = numpy.repeat(numpy.arange(n_class - 1), R)
    tiled = numpy.broadcast_to(host_bbox[::-1], (n_class - 1, R, 4)).reshape(-1, 4)
    kept = nms.batched_non_maximum_suppression(tiled, fg_score, label, nms_thresh)
    if len(kept):
        score = fg_score[kept]  # decreasing
        floor = max(score[min(len(kept), limit) - 1], score.dtype.type(score_thresh))
        kept = kept[score >= floor]
    return tuple(backend.on_device_of(array, bbox) for array in (
        R - 1 - kept % R, label[kept], fg_score[kept]))


def _vote(seg_prob, bbox, weight, size, binary_thresh):
    """Step 3: (K, H, W) float32 maps, ``weight`` (K, R) times the RoIs' binary masks."""
    xp = backend.get_array_module(seg_prob)
    H, W = size
    corner = xp.round(bbox.astype(numpy.float32)).astype(numpy.int64)
    start, length = corner[:, :2], corner[:, 2:] - corner[:, :2]
    votes = xp.zeros((len(weight), H, W), numpy.float32)
    band = max(1, _BAND_ELEMENTS // max(1, len(bbox) * W))
    for top in range(0, H, band):  # NOTE: bands of rows bound the memory of the masks
        rows = min(band, H - top)
        shift = xp.asarray([0, top], numpy.int64)
        masks = mask_paste.paste_in_boxes(seg_prob, start - shift, length, (rows, W),
                                          binary_thresh, inclusive=True)
        votes[:, top:top + rows] = (weight @ masks.reshape(len(bbox), rows * W)
                                    .astype(numpy.float32)).reshape(len(weight), rows, W)
    return votes


def _extent(xp, hit):
    """(K, N) bool -> first index and one past the last True of each row."""
    n = hit.shape[1]
    return hit.argmax(axis=1), n - hit[:, ::-1].argmax(axis=1)


def _resize_matrix(xp, low, high, n_out, n_pixel):
    """(K, n_out, n_pixel) float32: OpenCV's bilinear resize of the pixels [low, high)
    of an axis to n_out cells, with the taps of ``mask_paste.bilinear_taps``."""
    first, second, frac = mask_paste.bilinear_taps(
        xp, xp.arange(n_out)[None, :], n_out, (high - low)[:, None])
    first, second = first + low[:, None], second + low[:, None]
    pixel = xp.arange(n_pixel)[None, None, :]
    return ((1 - frac)[..., None] * (pixel == first[..., None])
            + frac[..., None] * (pixel == second[..., None])).astype(numpy.float32)


def mask_voting(seg_prob, bbox, cls_prob, size, *, score_thresh, nms_thresh,
                mask_merge_thresh=0.5, binary_thresh=0.4, limit=100):
    """Merge the masks of overlapping RoIs into instances (see the module docstring).

    Args:
        seg_prob (array): (R, M_h, M_w) float32 inside probabilities over each RoI.
        bbox (array): (R, 4) float RoIs (x_min, y_min, x_max, y_max) in image pixels.
        cls_prob (array): (R, n_class) class probabilities, background first.
        size (tuple of int): the image's (H, W).
        score_thresh, nms_thresh, mask_merge_thresh, binary_thresh (float): thresholds.
        limit (int): about the most instances kept.

    Returns:
        tuple: ``prob`` (K, M_h, M_w) float32 merged mask probabilities over ``bbox``
        (K, 4) float32 integer pixel bounds, ``label`` (K,) int32 (0-based foreground)
        and ``score`` (K,) float32, decreasing; on ``seg_prob``'s device.
    """
    xp = backend.get_array_module(seg_prob)
    H, W = size
    roi, label, score = select_pairs(bbox, cls_prob, score_thresh, nms_thresh, limit)
    overlap = bbox_utils.bbox_iou(bbox[roi], bbox) >= mask_merge_thresh
    weight = xp.where(overlap, cls_prob[:, label + 1].T, 0).astype(numpy.float32)
    weight /= weight.sum(axis=1, keepdims=True)
    votes = _vote(seg_prob, bbox, weight, size, binary_thresh)
    hit = votes >= binary_thresh
    rows, cols = hit.any(axis=2), hit.any(axis=1)
    found, = detector.to_host(rows.any(axis=1))
    found = backend.on_device_of(numpy.nonzero(found)[0], seg_prob)
    votes, rows, cols = votes[found], rows[found], cols[found]
    y_min, y_max = _extent(xp, rows)
    x_min, x_max = _extent(xp, cols)
    M_h, M_w = seg_prob.shape[1:]
    prob = (_resize_matrix(xp, y_min, y_max, M_h, H) @ votes
            @ _resize_matrix(xp, x_min, x_max, M_w, W).transpose(0, 2, 1))
    voted_bbox = xp.stack([x_min, y_min, x_max, y_max], axis=1).astype(numpy.float32)
    return (xp.clip(prob, 0, 1).astype(numpy.float32), voted_bbox,
            label[found].astype(numpy.int32), score[found].astype(numpy.float32))
