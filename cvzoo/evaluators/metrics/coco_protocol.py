"""The COCO evaluation protocol (pycocotools' COCOeval), vectorised with NumPy.

The detections of each (image, class) group are matched greedily to its ground truth in
score order, for ten thresholds and every area range at once; a Python loop runs over
the rank of a detection inside its group (at most 100 steps, 20 for keypoints), never
over images or boxes. The precision and recall tables then come out exactly as COCOeval.accumulate()
builds them, so the summary numbers agree with pycocotools.

This module is shared by eval_detection_coco (box IoU), eval_instance_segmentation_coco
(mask IoU) and eval_keypoint_detection_coco (OKS): the first two pass their intersection
function, the last its own similarity and the keypoint parameter set (:data:`KEYPOINTS`).
"""

import dataclasses

import numpy

IOU_THRESHS = numpy.linspace(0.5, 0.95, 10)
RECALL_THRESHS = numpy.linspace(0.0, 1.0, 101)
AREA_RANGES = {
    'all': (0.0, 1e10),
    'small': (0.0, 32.0 ** 2),
    'medium': (32.0 ** 2, 96.0 ** 2),
    'large': (96.0 ** 2, 1e10),
}
AREA_NAMES = tuple(AREA_RANGES)
MAX_DETS = (1, 10, 100)


def _ceil_pow2(n):
    """The smallest power of two >= n (1 for n <= 1), elementwise."""
    n = numpy.maximum(numpy.asarray(n), 1)
    return (2 ** numpy.ceil(numpy.log2(n))).astype(numpy.int64)


def _rank_in_group(group):
    """The position of each element inside its run of equal, sorted ``group`` values."""
    n = len(group)
    if n == 0:
        return numpy.zeros(0, numpy.int64)
    starts = numpy.r_[0, numpy.flatnonzero(group[1:] != group[:-1]) + 1]
    lengths = numpy.diff(numpy.r_[starts, n])
    return numpy.arange(n) - numpy.repeat(starts, lengths)


def _last_argmax(key):
    """Index of the last maximum along the last axis (COCOeval keeps the last of ties)."""
    size = key.shape[-1]
    return size - 1 - numpy.argmax(key[..., ::-1], axis=-1)


class Problem:
    """The flat, sorted description of one COCO evaluation.

    Attributes (D kept detections, G ground truths, all float64 / int64):
        det_img, det_label, det_score, det_rank: image index, class, score and rank
            inside its (image, class) group by decreasing score (stable), D each.
        det_index: the index into the caller's flat detection arrays.
        det_area: (D,) area used for the area ranges.
        gt_img, gt_label, gt_crowd, gt_area: (G,) as above; gt_index likewise.
        gt_ignore: (G,) bool, ground truths that no detection has to find: the crowds,
            and what the caller adds (COCOeval's keypoint mode: those without keypoints).

    Only the best ``max_det`` detections of each (image, class) group are kept.
    """

    def __init__(self, det_img, det_label, det_score, det_area, gt_img, gt_label, gt_crowd,
                 gt_area, *, max_det=MAX_DETS[-1], gt_ignore=None):
        det_score = numpy.asarray(det_score, numpy.float64)
        order = numpy.lexsort((-det_score, det_label, det_img))
        group = det_img[order] * (int(max(det_label.max(initial=0), gt_label.max(initial=0)))
                                  + 1) + det_label[order]
        rank = _rank_in_group(group)
        keep = rank < max_det
        self.det_index = order[keep]
        self.det_rank = rank[keep]
        self.det_img = det_img[self.det_index]
        self.det_label = det_label[self.det_index]
        self.det_score = det_score[self.det_index]
        self.det_area = numpy.asarray(det_area, numpy.float64)[self.det_index]
        self.gt_index = numpy.lexsort((numpy.arange(len(gt_img)), gt_label, gt_img))
        self.gt_img = gt_img[self.gt_index]
        self.gt_label = gt_label[self.gt_index]
        self.gt_crowd = numpy.asarray(gt_crowd, bool)[self.gt_index]
        self.gt_area = numpy.asarray(gt_area, numpy.float64)[self.gt_index]
        self.gt_ignore = self.gt_crowd.copy()
        if gt_ignore is not None:
            self.gt_ignore |= numpy.asarray(gt_ignore, bool)[self.gt_index]


def _groups(problem):
    """Group id of each detection and ground truth, and per-group counts."""
    n_label = int(max(problem.det_label.max(initial=0), problem.gt_label.max(initial=0))) + 1
    det_key = problem.det_img.astype(numpy.int64) * n_label + problem.det_label
    gt_key = problem.gt_img.astype(numpy.int64) * n_label + problem.gt_label
    keys, inverse = numpy.unique(numpy.r_[det_key, gt_key], return_inverse=True)
    det_group = inverse[:len(det_key)]
    gt_group = inverse[len(det_key):]
    n_det = numpy.bincount(det_group, minlength=len(keys))
    n_gt = numpy.bincount(gt_group, minlength=len(keys))
    return det_group, gt_group, n_det, n_gt


def _take(values, idx, fill=0):
    """``values[idx]`` where idx >= 0 and ``fill`` at the padding (idx == -1)."""
    if len(values) == 0:
        shape = idx.shape + numpy.shape(values)[1:]
        return numpy.full(shape, fill, dtype=numpy.asarray(values).dtype)
    out = values[numpy.maximum(idx, 0)]
    out[idx < 0] = fill
    return out


def _area_ignore(area, area_ranges=AREA_RANGES):
    """(N, A) bool: True where ``area`` lies outside each area range."""
    lo = numpy.array([r[0] for r in area_ranges.values()])
    hi = numpy.array([r[1] for r in area_ranges.values()])
    return (area[:, None] < lo) | (area[:, None] > hi)


def _match_bucket(iou, gt_ignore, gt_crowd, gt_exists):
    """Greedy COCO matching of padded groups.

    Args:
        iou: (n, Dp, Gp) IoU of each detection (by rank) with each ground truth.
        gt_ignore: (n, A, Gp) bool; gt_crowd, gt_exists: (n, Gp) bool.

    Returns:
        matched, gt_ignored: (n, A, T, Dp) bool; whether a detection found a ground truth
        and whether that ground truth is ignored.
    """
    n, n_det, n_gt = iou.shape
    n_area = gt_ignore.shape[1]
    thresh = numpy.minimum(IOU_THRESHS, 1 - 1e-10)[None, None, :, None]
    shape = (n, n_area, len(IOU_THRESHS))
    gt_taken = numpy.zeros(shape + (n_gt,), bool)
    matched = numpy.zeros(shape + (n_det,), bool)
    matched_ignored = numpy.zeros(shape + (n_det,), bool)
    ignore = gt_ignore[:, :, None, :]
    rows = numpy.indices(shape)
    for r in range(n_det):
        iou_r = iou[:, None, None, r, :]
        blocked = (gt_taken & ~gt_crowd[:, None, None, :]) | ~gt_exists[:, None, None, :]
        ok = (iou_r >= thresh) & ~blocked
        # NOTE: COCOeval prefers any ground truth that is not ignored; among equals it
        # keeps the one with the highest IoU, and the last one on a tie.
        ok_kept = ok & ~ignore
        ok_ignored = ok & ignore
        use_kept = ok_kept.any(axis=-1)
        key = numpy.where(numpy.where(use_kept[..., None], ok_kept, ok_ignored), iou_r, -1.0)
        best = _last_argmax(key)
        found = use_kept | ok_ignored.any(axis=-1)
        matched[..., r] = found
        matched_ignored[..., r] = found & ~use_kept
        gt_taken[rows[0], rows[1], rows[2], best] |= found
    return matched, matched_ignored


# NOTE: the most (group, detection, ground truth) cells matched at once; groups of a
# bucket are taken in chunks below it, so memory stays bounded however many boxes an
# image has (one group alone may exceed it).
_CELLS_PER_CHUNK = 2 ** 22


def _buckets(n_det, n_gt, cell_size=1):
    """Split the groups that have detections into buckets of equal padded size.

    Yields ``(groups, d_pad, g_pad)``: the group ids of one chunk of a bucket, and the
    power-of-two sizes its detections and ground truths are padded to. Exact for any
    count: the two padded sizes are compared as a pair, not packed into one number.
    ``cell_size`` is how many numbers the similarity holds per pair (a chunk holds at
    most ``_CELLS_PER_CHUNK`` numbers).
    """
    with_det = numpy.flatnonzero(n_det > 0)
    pads = numpy.stack([_ceil_pow2(n_det[with_det]), _ceil_pow2(n_gt[with_det])], axis=1)
    sizes, bucket = numpy.unique(pads.reshape(-1, 2), axis=0, return_inverse=True)
    bucket = bucket.reshape(-1)
    for b, (d_pad, g_pad) in enumerate(sizes.tolist()):
        groups = with_det[bucket == b]
        chunk = max(1, _CELLS_PER_CHUNK // (d_pad * g_pad * cell_size))
        for start in range(0, len(groups), chunk):
            yield groups[start:start + chunk], d_pad, g_pad


def _padded_indices(groups, n_group, member_group, member_pos, pad):
    """(len(groups), pad) index into the members (-1 = padding), one row per group."""
    local = numpy.full(n_group, -1)
    local[groups] = numpy.arange(len(groups))
    sel = numpy.flatnonzero(local[member_group] >= 0)
    idx = numpy.full((len(groups), pad), -1)
    idx[local[member_group[sel]], member_pos[sel]] = sel
    return idx


def iou(problem, intersection_fn, det_idx, gt_idx, det_iou_area, gt_iou_area):
    """(n, Dp, Gp) COCO IoU of padded detections and ground truths (0 at the padding).

    ``det_idx`` (n, Dp) and ``gt_idx`` (n, Gp) index the problem's (sorted) detections
    and ground truths (-1 = padding). ``intersection_fn(det_idx, gt_idx)`` takes the same
    indices mapped into the caller's flat arrays and returns the (n, Dp, Gp) float64
    intersection areas; ``det_iou_area`` (D,) and ``gt_iou_area`` (G,) are the areas that
    go into the denominators, in the problem's order. A crowd region's union is the
    detection's own area, as in COCOeval.
    """
    inter = intersection_fn(_take(problem.det_index, det_idx, -1),
                            _take(problem.gt_index, gt_idx, -1))
    crowd = _take(problem.gt_crowd, gt_idx, False)
    det_a = _take(det_iou_area, det_idx)[:, :, None]
    gt_a = _take(gt_iou_area, gt_idx)[:, None, :]
    union = numpy.where(crowd[:, None, :], det_a, det_a + gt_a - inter)
    return numpy.where(union > 0, inter / numpy.where(union > 0, union, 1.0), 0.0)


def match_similarity(problem, similarity_fn, params=None, cell_size=1):
    """Run the greedy matching; return (D, A, T) bool arrays ``matched`` and ``ignored``.

    ``similarity_fn(det_idx, gt_idx)`` takes (n, Dp) and (n, Gp) int arrays of indices
    into the problem's (sorted) detections and ground truths (-1 = padding) and returns
    the (n, Dp, Gp) float64 similarities (IoU, OKS), any finite value at the padding.
    ``params`` (:class:`Params`, default :data:`DETECTION`) gives the area ranges;
    ``cell_size`` is how many numbers the similarity holds per pair while it works, to
    keep a chunk's memory bounded. Any number of boxes per image and class is handled
    exactly.
    """
    area_ranges = (params or DETECTION).area_ranges
    det_group, gt_group, n_det, n_gt = _groups(problem)
    gt_pos = _rank_in_group(gt_group)
    n_area, n_iou = len(area_ranges), len(IOU_THRESHS)
    matched = numpy.zeros((len(det_group), n_area, n_iou), bool)
    ignored = numpy.zeros((len(det_group), n_area, n_iou), bool)
    gt_ignore_all = _area_ignore(problem.gt_area, area_ranges) | problem.gt_ignore[:, None]
    for groups, d_pad, g_pad in _buckets(n_det, n_gt, cell_size):
        det_idx = _padded_indices(groups, len(n_det), det_group, problem.det_rank, d_pad)
        gt_idx = _padded_indices(groups, len(n_det), gt_group, gt_pos, g_pad)
        iou = similarity_fn(det_idx, gt_idx)
        gt_ignore = numpy.moveaxis(_take(gt_ignore_all, gt_idx, True), 1, 2)
        crowd = _take(problem.gt_crowd, gt_idx, False)
        m, m_ig = _match_bucket(iou, gt_ignore, crowd, gt_idx >= 0)
        valid = det_idx >= 0
        matched[det_idx[valid]] = numpy.moveaxis(m, 3, 1)[valid]
        ignored[det_idx[valid]] = numpy.moveaxis(m_ig, 3, 1)[valid]
    outside = _area_ignore(problem.det_area, area_ranges)[:, :, None]
    ignored |= ~matched & outside
    return matched, ignored


def _class_tables(matched, ignored, n_kept_gt):
    """Precision (T, R) and recall (T,) of one class, area range and max_dets (COCOeval)."""
    n_iou = len(IOU_THRESHS)
    precision = numpy.zeros((n_iou, len(RECALL_THRESHS)))
    n_pred = matched.shape[1]
    if n_pred == 0:
        return precision, numpy.zeros(n_iou)
    tp = numpy.cumsum(matched & ~ignored, axis=1).astype(numpy.float64)
    fp = numpy.cumsum(~matched & ~ignored, axis=1).astype(numpy.float64)
    rec = tp / n_kept_gt
    prec = tp / (fp + tp + numpy.spacing(1))
    # NOTE: the precision envelope (the maximum to the right) of COCOeval.accumulate.
    prec = numpy.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
    for t in range(n_iou):
        inds = numpy.searchsorted(rec[t], RECALL_THRESHS, side='left')
        inds = inds[inds < n_pred]
        precision[t, :len(inds)] = prec[t, inds]
    return precision, rec[:, -1]


def accumulate(problem, matched, ignored, labels, params=None):
    """Build COCOeval's tables; -1 marks a class without any kept ground truth.

    Args:
        problem (Problem): the detections and ground truths.
        matched, ignored: (D, A, T) bool from :func:`match`.
        labels: the classes to report, in order (K of them).
        params (Params or None): the area ranges and caps (default :data:`DETECTION`).

    Returns:
        precision: (T, R, K, A, M) float64 and recall: (T, K, A, M) float64, as
        ``COCOeval.eval['precision']`` and ``['recall']``.
    """
    params = params or DETECTION
    n_iou, n_area, n_max = len(IOU_THRESHS), len(params.area_ranges), len(params.max_dets)
    precision = -numpy.ones((n_iou, len(RECALL_THRESHS), len(labels), n_area, n_max))
    recall = -numpy.ones((n_iou, len(labels), n_area, n_max))
    order = numpy.lexsort((problem.det_rank, problem.det_img, -problem.det_score,
                           problem.det_label))
    gt_kept = ~(_area_ignore(problem.gt_area, params.area_ranges) | problem.gt_ignore[:, None])
    for k, label in enumerate(labels):
        det_sel = order[problem.det_label[order] == label]
        n_kept_gt = gt_kept[problem.gt_label == label].sum(axis=0)
        for a in range(n_area):
            if n_kept_gt[a] == 0:
                continue
            for m, max_det in enumerate(params.max_dets):
                sel = det_sel[problem.det_rank[det_sel] < max_det]
                p, r = _class_tables(matched[sel, a].T, ignored[sel, a].T, n_kept_gt[a])
                precision[:, :, k, a, m] = p
                recall[:, k, a, m] = r
    return precision, recall


SUMMARY = (
    # (metric, iou, area, max_dets)
    ('ap', '0.50:0.95', 'all', 100),
    ('ap', '0.50', 'all', 100),
    ('ap', '0.75', 'all', 100),
    ('ap', '0.50:0.95', 'small', 100),
    ('ap', '0.50:0.95', 'medium', 100),
    ('ap', '0.50:0.95', 'large', 100),
    ('ar', '0.50:0.95', 'all', 1),
    ('ar', '0.50:0.95', 'all', 10),
    ('ar', '0.50:0.95', 'all', 100),
    ('ar', '0.50:0.95', 'small', 100),
    ('ar', '0.50:0.95', 'medium', 100),
    ('ar', '0.50:0.95', 'large', 100),
)
_IOU_INDEX = {'0.50:0.95': slice(None), '0.50': slice(0, 1), '0.75': slice(5, 6)}


@dataclasses.dataclass(frozen=True)
class Params:
    """One of COCOeval's parameter sets: area ranges, detection caps and summary lines.

    Attributes:
        area_ranges (dict): name -> (lowest, highest) area, in COCOeval's order.
        max_dets (tuple of int): the caps on detections per image and class, ascending;
            only the best ``max_dets[-1]`` detections of a group count at all.
        summary (tuple): ``(metric, iou, area, max_dets)`` of each summary number.
    """

    area_ranges: dict
    max_dets: tuple
    summary: tuple


# COCOeval(iouType='bbox' or 'segm')
DETECTION = Params(AREA_RANGES, MAX_DETS, SUMMARY)
# COCOeval(iouType='keypoints'): setKpParams and _summarizeKps
KEYPOINTS = Params(
    {name: AREA_RANGES[name] for name in ('all', 'medium', 'large')}, (20,),
    tuple((metric, iou, area, 20) for metric in ('ap', 'ar') for iou, area in (
        ('0.50:0.95', 'all'), ('0.50', 'all'), ('0.75', 'all'), ('0.50:0.95', 'medium'),
        ('0.50:0.95', 'large'))))


def _masked_mean(values, axis):
    """Mean of the entries > -1 along ``axis``; nan where there is none."""
    kept = values > -1
    total = numpy.where(kept, values, 0.0).sum(axis=axis)
    count = kept.sum(axis=axis)
    with numpy.errstate(invalid='ignore', divide='ignore'):
        return numpy.where(count > 0, total / numpy.maximum(count, 1), numpy.nan)


def summarize(precision, recall, labels, n_class, params=None):
    """The COCO summary numbers and per-class arrays, under ChainerCV's keys.

    ``'map/...'`` and ``'mar/...'`` are floats (nan where pycocotools prints -1);
    ``'ap/...'`` and ``'ar/...'`` are (n_class,) float64 arrays, nan for a class that is
    absent from ``labels`` or has no ground truth in that area range. ``params``
    (default :data:`DETECTION`, twelve numbers) names the lines.
    """
    params = params or DETECTION
    result = {}
    labels = numpy.asarray(labels, numpy.int64)
    for metric, iou, area, max_det in params.summary:
        a = tuple(params.area_ranges).index(area)
        m = params.max_dets.index(max_det)
        if metric == 'ap':
            table = precision[_IOU_INDEX[iou], :, :, a, m]
            per_class = _masked_mean(table, axis=(0, 1))
            overall = _masked_mean(table, axis=None)
        else:
            table = recall[_IOU_INDEX[iou], :, a, m]
            per_class = _masked_mean(table, axis=0)
            overall = _masked_mean(table, axis=None)
        name = f'iou={iou}/area={area}/max_dets={max_det}'
        full = numpy.full(n_class, numpy.nan)
        full[labels] = per_class
        result[f'{metric}/{name}'] = full
        result[f'm{metric}/{name}'] = float(overall)
    return result


def evaluate(problem, similarity_fn, params=None, cell_size=1):
    """Match, accumulate and summarise: the result dict of the eval_*_coco functions.

    Args:
        problem (Problem): the detections and ground truths.
        similarity_fn: as for :func:`match_similarity`.
        params (Params or None): default :data:`DETECTION`.
        cell_size (int): as for :func:`match_similarity`.

    Returns:
        dict: :func:`summarize`'s entries and ``'existent_labels'``, the classes present
        in the ground truth or the predictions.
    """
    matched, ignored = match_similarity(problem, similarity_fn, params, cell_size)
    labels = numpy.unique(numpy.r_[problem.det_label, problem.gt_label])
    precision, recall = accumulate(problem, matched, ignored, labels, params)
    n_class = int(labels.max()) + 1 if len(labels) else 0
    result = summarize(precision, recall, labels, n_class, params)
    result['existent_labels'] = labels
    return result
