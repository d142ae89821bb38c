"""Non-maximum suppression, vectorised in blocks, on NumPy or GPU arrays.

The result is exactly ChainerCV's greedy NMS: boxes are visited by decreasing score
(ties: lower index first) and a box is dropped when its IoU with an already kept box
is ``>= thresh``. Instead of one Python step per box, the sorted boxes are processed
in blocks of ``_BLOCK`` boxes: a block is first resolved against itself with a few
vectorised rounds (a box is kept when no surviving higher-scored box of the block hits
it), and then its kept boxes suppress every later box still alive in one broadcast.
The cost is about (kept boxes) x (alive boxes); see bench/bench_nms.py.
"""

import numbers

from cvzoo.core import backend

_BLOCK = 512


def _hits(thresh, bbox_a, area_a, bbox_b, area_b):
    """(len(a), len(b)) bool: IoU(a_i, b_j) >= thresh, written without a division."""
    xp = backend.get_array_module(bbox_a)
    if thresh <= 0:
        return xp.ones((len(bbox_a), len(bbox_b)), dtype=bool)
    width = xp.minimum(bbox_a[:, None, 2], bbox_b[None, :, 2])
    width -= xp.maximum(bbox_a[:, None, 0], bbox_b[None, :, 0])
    height = xp.minimum(bbox_a[:, None, 3], bbox_b[None, :, 3])
    height -= xp.maximum(bbox_a[:, None, 1], bbox_b[None, :, 1])
    xp.maximum(width, 0, out=width)
    xp.maximum(height, 0, out=height)
    intersection = width * height
    # NOTE: inter / (a + b - inter) >= t  <=>  inter * (1 + t) >= t * (a + b) for a
    # positive union; the inter > 0 test keeps two empty boxes from "overlapping".
    hit = intersection * (1 + thresh) >= thresh * (area_a[:, None] + area_b[None, :])
    hit &= intersection > 0
    return hit


def _hits_with_label(thresh, sorted_data, rows, columns):
    bbox, area, label = sorted_data
    hit = _hits(thresh, bbox[rows], area[rows], bbox[columns], area[columns])
    if label is not None:
        hit &= label[rows][:, None] == label[columns][None, :]
    return hit


def _resolve_block(xp, hit):
    """Greedy NMS inside one block given its (k, k) upper-triangular hit matrix.

    Returns a (k,) bool array: kept. Each round keeps every undecided box that no
    undecided-or-kept earlier box hits, then drops every box a kept box hits; the
    result equals the sequential greedy pass.
    """
    n = hit.shape[0]
    undecided = xp.ones(n, dtype=bool)
    kept = xp.zeros(n, dtype=bool)
    while bool(undecided.any()):
        blocking = hit & (undecided | kept)[:, None]
        new = undecided & ~blocking.any(axis=0)
        kept |= new
        undecided &= ~new
        undecided &= ~hit[kept].any(axis=0)
    return kept


def _nms_sorted(thresh, sorted_data, limit):
    """Kept positions (in the sorted order) of greedy NMS over pre-sorted boxes."""
    bbox = sorted_data[0]
    xp = backend.get_array_module(bbox)
    n = len(bbox)
    alive = xp.ones(n, dtype=bool)
    kept_parts, n_kept = [], 0
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        candidates = start + xp.nonzero(alive[start:stop])[0]
        if len(candidates) == 0:
            continue
        hit = xp.triu(_hits_with_label(thresh, sorted_data, candidates, candidates), 1)
        kept = candidates[_resolve_block(xp, hit)]
        kept_parts.append(kept)
        n_kept += len(kept)
        if limit is not None and n_kept >= limit:
            break
        rest = stop + xp.nonzero(alive[stop:])[0]
        if len(rest) and len(kept):
            alive[rest[_hits_with_label(thresh, sorted_data, kept, rest).any(axis=0)]] = False
    if not kept_parts:
        return xp.zeros(0, dtype=xp.int64)
    kept = xp.concatenate(kept_parts)
    return kept if limit is None else kept[:limit]


def _check_arguments(bbox, thresh, score, limit):
    shape = getattr(bbox, 'shape', None)
    if shape is None or len(shape) != 2 or shape[1] != 4:
        raise ValueError(f'bbox: expected an (R, 4) array, got shape {shape}')
    if not isinstance(thresh, numbers.Real):
        raise TypeError(f'thresh: expected a number, got {type(thresh).__name__}')
    if score is not None and getattr(score, 'shape', None) != (shape[0],):
        raise ValueError(f'score: expected shape ({shape[0]},) to match bbox, '
                         f'got {getattr(score, "shape", None)}')
    if limit is not None and (not isinstance(limit, numbers.Integral) or limit < 0):
        raise ValueError(f'limit: expected None or an int >= 0, got {limit!r}')


def _sorted_data(bbox, score, label=None):
    xp = backend.get_array_module(bbox, score)
    if score is None:
        order = xp.arange(len(bbox))
    else:
        # NOTE: a stable sort of -score breaks ties by the lower index, repeatably.
        order = xp.argsort(-score, kind='stable')
    if not xp.issubdtype(bbox.dtype, xp.floating):
        bbox = bbox.astype(xp.float32)
    sorted_bbox = bbox[order]
    size = xp.maximum(sorted_bbox[:, 2:] - sorted_bbox[:, :2], 0)
    area = size[:, 0] * size[:, 1]
    sorted_label = None if label is None else label[order]
    return order, (sorted_bbox, area, sorted_label)


def non_maximum_suppression(bbox, thresh, score=None, limit=None):
    """Suppress boxes that overlap a higher-scored box (greedy NMS, ChainerCV semantics).

    Args:
        bbox (array): (R, 4), (x_min, y_min, x_max, y_max), on any device.
        thresh (float): a box is dropped when its IoU with a kept box is >= thresh.
        score (array or None): (R,) scores; None keeps the given order as the priority.
        limit (int or None): keep at most this many boxes.

    Returns:
        array: (K,) int32 indices into ``bbox`` of the kept boxes, highest score first,
        on the device of ``bbox``.

    >>> import numpy as np
    >>> bbox = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]], np.float32)
    >>> non_maximum_suppression(bbox, 0.5, np.array([0.5, 0.9, 0.1], np.float32))
    array([1, 2], dtype=int32)
    """
    _check_arguments(bbox, thresh, score, limit)
    xp = backend.get_array_module(bbox, score)
    if len(bbox) == 0 or limit == 0:
        return xp.zeros(0, dtype=xp.int32)
    order, sorted_data = _sorted_data(bbox, score)
    kept = _nms_sorted(float(thresh), sorted_data, limit)
    return order[kept].astype(xp.int32)


def batched_non_maximum_suppression(bbox, score, label, thresh, limit=None):
    """NMS within each class: boxes of different labels never suppress each other.

    The result equals running non_maximum_suppression per label and merging the kept
    boxes by decreasing score; it is computed in one pass (a hit needs equal labels).

    Args:
        bbox (array): (R, 4), (x_min, y_min, x_max, y_max).
        score (array): (R,) scores.
        label (array): (R,) int class ids.
        thresh (float): IoU threshold, as in non_maximum_suppression.
        limit (int or None): keep at most this many boxes over all classes.

    Returns:
        array: (K,) int32 indices into ``bbox``, highest score first.

    >>> import numpy as np
    >>> bbox = np.array([[0, 0, 10, 10], [1, 1, 10, 10]], np.float32)
    >>> batched_non_maximum_suppression(
    ...     bbox, np.array([0.9, 0.8], np.float32), np.array([0, 1]), 0.5)
    array([0, 1], dtype=int32)
    """
    if score is None:
        raise ValueError('score: expected an (R,) array, got None')
    _check_arguments(bbox, thresh, score, limit)
    if getattr(label, 'shape', None) != (len(bbox),):
        raise ValueError(f'label: expected shape ({len(bbox)},) to match bbox, '
                         f'got {getattr(label, "shape", None)}')
    xp = backend.get_array_module(bbox, score, label)
    if len(bbox) == 0 or limit == 0:
        return xp.zeros(0, dtype=xp.int32)
    order, sorted_data = _sorted_data(bbox, score, label)
    kept = _nms_sorted(float(thresh), sorted_data, limit)
    return order[kept].astype(xp.int32)
