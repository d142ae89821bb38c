"""Non-maximum suppression on a sparse overlap graph, on NumPy or GPU arrays.

The result is exactly ChainerCV's greedy NMS: boxes are visited by decreasing score
(ties: lower index first) and a box is dropped when its IoU with an already kept box
is ``>= thresh``. No Python step per box is taken:

1. the pairs of boxes that can reach the threshold are listed without looking at all
   pairs: the boxes are cut into horizontal strips a little taller than the largest
   vertical offset of two boxes that hit, and sorted by (label, strip, x_min); the
   partners of a box then lie in three contiguous ranges (strips -1, 0, +1, x_min up to
   its reach), found with searchsorted. The ranges are expanded into pairs in chunks of
   about ``_CHUNK`` and the exact IoU test keeps the pairs that hit;
2. the greedy pass is replayed on that graph in vectorised rounds: a box is kept when
   no undecided higher-scored neighbour is left, and its lower-scored neighbours are
   dropped; the rounds end when every box is decided, after as many rounds as the
   longest keep/drop chain (a few in practice, one per two boxes for a chain of boxes
   each hitting the next).

The best ``_HEAD_FRACTION`` of the boxes is solved first and its kept boxes drop what
they hit among the rest, so that the clusters around each object are gone before the
pairs inside them are listed. Inputs of at most ``_DENSE_MAX`` boxes use one dense hit
matrix instead. See bench/bench_nms.py and the NMS section of docs/benchmarks.md for
timings.

On a GPU the greedy pass, sequential by nature, is not run on the device: the boxes,
scores and labels are read back in one transfer (one host synchronisation per call,
whatever the number of classes, images or rounds), suppressed on the host exactly as
NumPy input would be, and the kept indices are sent back to the boxes' device, as
torchvision's CUDA NMS reads its overlap mask back to finish on the host.
"""

import itertools
import numbers

import numpy

from cvzoo.core import backend

_CHUNK = 1 << 14
_DENSE_MAX = 128
_HEAD_FRACTION = 0.125
# NOTE: the reach of a box (how far along an axis a partner may start) is shortened by
# the threshold only for float32 and float64 boxes, with a relative margin far above
# their rounding (and an absolute slack above the rounding of the float64 bounds), so
# that no pair the IoU test in the boxes' dtype would accept is left out.
_REACH_MARGIN = 1e-3
_REACH_SLACK = 1e-14
_REACH_MIN_THRESH = 1e-3


def _hits(thresh, box_a, area_a, box_b, area_b):
    """IoU(a, b) >= thresh, elementwise over broadcast operands, without a division.

    ``box_a`` and ``box_b`` are sequences (x_min, y_min, x_max, y_max) of arrays.
    """
    xp = backend.get_array_module(area_a)
    width = xp.minimum(box_a[2], box_b[2])
    width -= xp.maximum(box_a[0], box_b[0])
    height = xp.minimum(box_a[3], box_b[3])
    height -= xp.maximum(box_a[1], box_b[1])
    xp.maximum(width, 0, out=width)
    xp.maximum(height, 0, out=height)
    intersection = width * height
    # NOTE: inter / (a + b - inter) >= t  <=>  inter * (1 + t) >= t * (a + b) for a
    # positive union; the inter > 0 test keeps two empty boxes from "overlapping".
    hit = intersection * (1 + thresh) >= thresh * (area_a + area_b)
    hit &= intersection > 0
    return hit


def _area(xp, box):
    """Box areas from the coordinate rows, exactly as _sorted_data computes them."""
    return xp.maximum(box[2] - box[0], 0) * xp.maximum(box[3] - box[1], 0)


def _dense_kept(xp, thresh, box, area, group):
    """Kept positions of greedy NMS of a few rank-sorted boxes, with one hit matrix.

    ``box`` is the sequence (x_min, y_min, x_max, y_max) of (n,) arrays; ``group`` is
    None or the (n,) labels.
    """
    hit = _hits(thresh, [row[:, None] for row in box], area[:, None],
                [row[None, :] for row in box], area[None, :])
    hit = xp.triu(hit, 1)
    if group is not None:
        hit &= group[:, None] == group[None, :]
    n = hit.shape[0]
    undecided = xp.ones(n, dtype=bool)
    kept = xp.zeros(n, dtype=bool)
    while bool(undecided.any()):
        blocking = hit & (undecided | kept)[:, None]
        new = undecided & ~blocking.any(axis=0)
        kept |= new
        undecided &= ~new
        undecided &= ~hit[kept].any(axis=0)
    return xp.nonzero(kept)[0]


def _resolve_graph(xp, n, source, target):
    """Greedy NMS on the hit graph of n rank-sorted boxes (edges source < target).

    Invariant between rounds: no undecided box has a kept neighbour. A box whose
    higher-ranked neighbours are all dropped is kept, exactly as the greedy pass would.
    """
    undecided = xp.ones(n, dtype=bool)
    kept = xp.zeros(n, dtype=bool)
    while True:
        live = undecided[source] & undecided[target]
        source, target = source[live], target[live]
        blocked = xp.zeros(n, dtype=bool)
        blocked[target] = True
        new = undecided & ~blocked
        kept |= new
        undecided &= ~new
        undecided[target[new[source]]] = False
        if not bool(undecided.any()):
            return xp.nonzero(kept)[0]


def _extents(xp, thresh, bbox, axis):
    """Float64 (low, high, back, forth) of every box along ``axis`` (0: x, 1: y).

    A box that hits box i and starts at or after low_i starts at most at forth_i and
    below high_i; one that starts before low_i starts at or after back_i.
    """
    low, high = bbox[:, axis].astype(xp.float64), bbox[:, axis + 2].astype(xp.float64)
    if bbox.dtype not in (xp.float32, xp.float64) or not thresh >= _REACH_MIN_THRESH:
        return low, high, xp.full(len(low), -xp.inf), high
    # NOTE: IoU >= t needs an overlap of at least t * (extent of either box) along each
    # axis, so the later box starts at most (1 - t) * extent after the earlier one and
    # the sizes differ at most by a factor 1 / t; the margins stay far above float32
    # rounding and float64 computes the bounds (checked in tests/utils/test_nms.py).
    t = min(float(thresh), 1.0)
    size = xp.maximum(bbox[:, axis + 2] - bbox[:, axis], 0).astype(xp.float64)
    slack = _REACH_SLACK * (abs(low) + abs(high))
    back = low - (1 / t - 1 + _REACH_MARGIN) * (1 + _REACH_MARGIN) * size - slack
    return low, high, back, high - t * (1 - _REACH_MARGIN) * size + slack


def _strips(xp, thresh, bbox, n_group):
    """Strip ids along y (two boxes that hit lie in the same or next strips) and their bound.

    Ids start at 1 and the bound leaves one free id on each side, so that the ids +-1
    searched for a box never reach another group's keys.
    """
    low, _, _, forth = _extents(xp, thresh, bbox, 1)
    n = len(low)
    height = float((forth - low).max()) * (1 + _REACH_MARGIN)
    span = float(low.max() - low.min())
    n_strip = min(n, (1 << 62) // (n * n_group + 1) - 3)
    if not (0 < height < float('inf') and span < float('inf')) or n_strip < 1:
        return xp.ones(n, dtype=xp.int64), 3
    height = max(height, span / n_strip)
    strip = xp.floor((low - low.min()) / height).astype(xp.int64) + 1
    return strip, int(strip.max()) + 2


def _geometry(xp, thresh, sorted_data):
    """Everything the pair search needs about the rank-sorted boxes, computed once.

    Along x every box gets its rank by x_min and the rank bounds of its partners:
    ``first`` (the first that may start before it) and ``last`` (one past the last that
    may start after it).
    """
    bbox, area, label = sorted_data
    n = len(bbox)
    group = xp.zeros(n, dtype=xp.int64)
    if label is not None:
        group = xp.unique(label, return_inverse=True)[1].reshape(-1).astype(xp.int64)
    strip, n_strip = _strips(xp, thresh, bbox, int(group.max()) + 1)
    low, _, back, forth = _extents(xp, thresh, bbox, 0)
    # NOTE: any order of equal x_min works; bounds are searched in x_min order, where
    # they are nearly sorted too, which makes searchsorted several times faster.
    by_low = xp.argsort(low)
    sorted_low = low[by_low]
    rank = xp.empty(n, dtype=xp.int64)
    rank[by_low] = xp.arange(n)
    first, last = xp.empty_like(rank), xp.empty_like(rank)
    first[by_low] = xp.searchsorted(sorted_low, back[by_low], side='left')
    # NOTE: forth exceeds high only by the slack, and equals it without pruning: the
    # extra candidates, starting at or just past high, do not overlap (one test each).
    last[by_low] = xp.searchsorted(sorted_low, forth[by_low], side='right')
    return {'thresh': thresh, 'n': n, 'group': group, 'base': group * n_strip + strip,
            'rank': rank, 'first': first, 'last': last,
            'columns': [xp.ascontiguousarray(bbox[:, k]) for k in range(4)] + [area]}


def _layout(xp, geometry, data):
    """The boxes ``data`` and their keys (group, strip) * n + rank, sorted by key."""
    key = geometry['base'][data] * geometry['n'] + geometry['rank'][data]
    by_key = xp.argsort(key)
    return data[by_key], key[by_key]


def _ranges(xp, geometry, layout, query):
    """Per query box and strip offset -1, 0, +1: the range of layout positions that may hit.

    ``query=None`` pairs the layout's boxes with each other (each pair once, from the
    box earlier along x); otherwise the query boxes, disjoint from the layout, are
    paired with the layout's boxes on both sides along x.
    """
    members, key = layout
    if query is None:
        query, side, first = members, 'right', geometry['rank'][members]
    else:
        side, first = 'left', geometry['first'][query]
    last = geometry['last'][query]
    starts, stops = [], []
    for offset in (-1, 0, 1):
        base = (geometry['base'][query] + offset) * geometry['n']
        starts.append(xp.searchsorted(key, base + first, side=side))
        stops.append(xp.searchsorted(key, base + last, side='left'))
    start = xp.concatenate(starts)
    return xp.tile(query, 3), start, xp.maximum(xp.concatenate(stops) - start, 0)


def _range_owner(xp, first, n_pair):
    """For each pair of a chunk, the index of its range, given the ranges' first pairs.

    Equals ``repeat(arange(len(first)), count)`` for counts >= 1, written without
    repeat, whose counts would have to be read back to the host on a GPU.
    """
    mark = xp.zeros(n_pair, dtype=xp.int64)
    mark[first[1:]] = 1
    return xp.cumsum(mark)


def _hit_pairs(xp, geometry, layout, ranges):
    """Expand the ranges in chunks of about ``_CHUNK`` pairs; keep the pairs that hit.

    Returns (near, far): positions in the rank order of the boxes of each hit pair.
    """
    nonempty = xp.nonzero(ranges[2])[0]
    near, start, count = (array[nonempty] for array in ranges)
    members = layout[0]
    offset = xp.cumsum(count)
    total = int(offset[-1]) if len(offset) else 0
    if total == 0:
        return xp.zeros(0, dtype=xp.int64), xp.zeros(0, dtype=xp.int64)
    splits = xp.searchsorted(offset, xp.arange(_CHUNK, total, _CHUNK), side='left') + 1
    bounds = [0, *sorted(set(splits.tolist()) - {len(near)}), len(near)]
    # NOTE: the far side is read in layout order, where each range is contiguous.
    far_columns = [column[members] for column in geometry['columns'][:4]]
    nears, fars = [], []
    for begin, stop in itertools.pairwise(bounds):
        first = offset[begin:stop] - count[begin:stop]
        first -= first[0]
        n_pair = int(offset[stop - 1] - offset[begin] + count[begin])
        owner = _range_owner(xp, first, n_pair)
        pair_near = xp.take(near[begin:stop], owner)
        far = xp.arange(n_pair) + xp.take(start[begin:stop] - first, owner)
        a = [xp.take(column, pair_near) for column in geometry['columns'][:4]]
        b = [xp.take(column, far) for column in far_columns]
        hit = _hits(geometry['thresh'], a, _area(xp, a), b, _area(xp, b))
        nears.append(pair_near[hit])
        fars.append(members[far[hit]])
    return xp.concatenate(nears), xp.concatenate(fars)


def _solve(xp, geometry, data):
    """Kept boxes of greedy NMS among ``data`` (ascending rank positions) alone."""
    if len(data) <= _DENSE_MAX:
        columns = [column[data] for column in geometry['columns']]
        return data[_dense_kept(xp, geometry['thresh'], columns[:4], columns[4],
                                geometry['group'][data])]
    layout = _layout(xp, geometry, data)
    near, far = _hit_pairs(xp, geometry, layout, _ranges(xp, geometry, layout, None))
    source = xp.searchsorted(data, xp.minimum(near, far))
    target = xp.searchsorted(data, xp.maximum(near, far))
    return data[_resolve_graph(xp, len(data), source, target)]


def _not_hit(xp, geometry, kept, data):
    """The boxes of ``data`` that no box of ``kept`` hits."""
    if len(kept) == 0 or len(data) == 0:
        return data
    layout = _layout(xp, geometry, data)
    _, far = _hit_pairs(xp, geometry, layout, _ranges(xp, geometry, layout, kept))
    alive = xp.ones(len(data), dtype=bool)
    alive[xp.searchsorted(data, far)] = False
    return data[alive]


def _first_of_each_group(xp, label):
    """Rank positions of the best box of each label (thresh <= 0: every pair hits)."""
    if label is None:
        return xp.zeros(1, dtype=xp.int64)
    return xp.sort(xp.unique(label, return_index=True)[1])


def _nms_sorted(thresh, sorted_data):
    """Kept positions (in the rank order) of greedy NMS over rank-sorted boxes.

    The best ``_HEAD_FRACTION`` of the boxes is solved first and its kept boxes drop
    what they hit among the rest, so that clusters of boxes around one object are
    removed before the pairs inside them are ever listed.
    """
    bbox, area, label = sorted_data
    xp = backend.get_array_module(bbox)
    n = len(bbox)
    if thresh <= 0:
        return _first_of_each_group(xp, label)
    if n <= _DENSE_MAX:
        return _dense_kept(xp, thresh, bbox.T, area, label)
    geometry = _geometry(xp, thresh, sorted_data)
    n_head = int(n * _HEAD_FRACTION) + 1
    kept = _solve(xp, geometry, xp.arange(min(n_head, n)))
    if n_head >= n:
        return kept
    rest = _not_hit(xp, geometry, kept, xp.arange(n_head, n))
    return xp.concatenate([kept, _solve(xp, geometry, rest)])


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
    if bbox.dtype.kind != 'f':
        bbox = bbox.astype(xp.float32)
    sorted_bbox = xp.take(bbox, order, axis=0)
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
    if xp is not numpy:
        host_bbox, host_score, _ = _to_host(bbox, score, None)
        return backend.on_device_of(
            non_maximum_suppression(host_bbox, thresh, host_score, limit), bbox)
    order, sorted_data = _sorted_data(bbox, score)
    kept = _nms_sorted(float(thresh), sorted_data)
    return order[kept[:limit]].astype(xp.int32)


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
    if xp is not numpy:
        return backend.on_device_of(batched_non_maximum_suppression(
            *_to_host(bbox, score, label), thresh, limit), bbox)
    order, sorted_data = _sorted_data(bbox, score, label)
    kept = _nms_sorted(float(thresh), sorted_data)
    return order[kept[:limit]].astype(xp.int32)


def _to_host(bbox, score, label):
    """Device ``bbox``, ``score`` and ``label`` (each may be None but bbox) read back to the
    host in one transfer, in their own dtypes.

    They travel as the columns of one float64 array: exact for float16/32/64 boxes and
    scores and for labels below 2 ** 53 in magnitude.
    """
    backend.check_same_device((bbox, score, label), 'non_maximum_suppression')
    xp = backend.get_array_module(bbox)
    parts = [bbox] + [a.reshape(-1, 1) for a in (score, label) if a is not None]
    packed = backend.to_numpy(xp.concatenate([a.astype(xp.float64) for a in parts], axis=1))
    host_bbox = packed[:, :4].astype(bbox.dtype)
    column = 4
    rest = []
    for array in (score, label):
        if array is None:
            rest.append(None)
            continue
        rest.append(packed[:, column].astype(array.dtype))
        column += 1
    return host_bbox, rest[0], rest[1]
