"""PASCAL VOC detection metric: average precision per class and its mean.

Split as in ChainerCV: :func:`calc_detection_voc_prec_rec` matches the detections and
builds the precision/recall curves, :func:`calc_detection_voc_ap` integrates them, and
:func:`eval_detection_voc` does both.
"""

import numpy

from cvzoo import errors
from cvzoo.evaluators.metrics import _inputs
from cvzoo.utils import bbox as bbox_ops


def _check_detection_inputs(pred_bboxes, pred_labels, pred_scores, gt_bboxes, gt_labels,
                            gt_difficults, bbox_name='bboxes'):
    pred_bboxes = _inputs.as_list(f'pred_{bbox_name}', pred_bboxes)
    n_img = len(pred_bboxes)
    lists = [pred_bboxes] + [
        _inputs.as_list(name, values, n_img) for name, values in (
            ('pred_labels', pred_labels), ('pred_scores', pred_scores),
            (f'gt_{bbox_name}', gt_bboxes), ('gt_labels', gt_labels),
            ('gt_difficults', gt_difficults))]
    if bbox_name == 'bboxes':
        for index in (0, 3):
            lists[index] = [b.reshape(0, 4) if b.size == 0 else b for b in lists[index]]
            name = ('pred_' if index == 0 else 'gt_') + bbox_name
            _inputs.check_rows(name, lists[index], (4,))
            _inputs.check_finite(name, lists[index])
    n_pred = [len(b) for b in lists[0]]
    n_gt = [len(b) for b in lists[3]]
    _inputs.check_rows('pred_labels', lists[1], (), n_pred)
    _inputs.check_rows('pred_scores', lists[2], (), n_pred)
    _inputs.check_rows('gt_labels', lists[4], (), n_gt)
    _inputs.check_labels('pred_labels', lists[1])
    _inputs.check_labels('gt_labels', lists[4])
    if lists[5] is not None:
        _inputs.check_rows('gt_difficults', lists[5], (), n_gt)
    return lists


def _assign(iou, pred_label, gt_label, iou_thresh):
    """Index of the ground truth each detection claims (-1: none above the threshold)."""
    if iou.shape[1] == 0:
        return numpy.full(len(pred_label), -1)
    iou = numpy.where(pred_label[:, None] == gt_label[None, :], iou, -1.0)
    gt_index = iou.argmax(axis=1)
    gt_index[iou.max(axis=1) < iou_thresh] = -1
    return gt_index


def match_detections(ious, pred_labels, pred_scores, gt_labels, gt_difficults, iou_thresh):
    """Mark each detection 1 (true positive), 0 (false) or -1 (matched a difficult box).

    ``ious`` holds one (R, R') IoU array per image (boxes or masks). Returns the flat
    labels, scores and marks in the order of decreasing score (stable), and the number
    of non-difficult ground truths per class.
    """
    pred_label, _ = _inputs.flatten(pred_labels, numpy.int64)
    score = _inputs.flatten(pred_scores, numpy.float64)[0]
    gt_label, _ = _inputs.flatten(gt_labels, numpy.int64)
    if gt_difficults is None:
        difficult = numpy.zeros(len(gt_label), bool)
    else:
        difficult = _inputs.flatten(gt_difficults, bool)[0]
    gt_offset = numpy.r_[0, numpy.cumsum([len(g) for g in gt_labels])]
    claim = numpy.concatenate([numpy.full(0, -1)] + [
        numpy.where(index >= 0, index + gt_offset[i], -1) for i, index in enumerate(
            _assign(iou, pl, gl, iou_thresh)
            for iou, pl, gl in zip(ious, pred_labels, gt_labels))]).astype(numpy.int64)
    # NOTE: ties in score keep the input order (images, then boxes), as the devkit's
    # stable sort does; ChainerCV's reversed argsort puts later boxes first.
    order = numpy.lexsort((numpy.arange(len(score)), -score, pred_label))
    claim = claim[order]
    match = numpy.zeros(len(claim), numpy.int8)
    hit = claim >= 0
    is_difficult = numpy.zeros(len(claim), bool)
    is_difficult[hit] = difficult[claim[hit]]
    match[is_difficult] = -1
    candidates = numpy.flatnonzero(hit & ~is_difficult)
    _, first = numpy.unique(claim[candidates], return_index=True)
    match[candidates[first]] = 1
    n_class = int(max(pred_label.max(initial=-1), gt_label.max(initial=-1))) + 1
    n_pos = numpy.bincount(gt_label[~difficult], minlength=n_class)
    present = numpy.bincount(numpy.r_[pred_label, gt_label], minlength=n_class) > 0
    return pred_label[order], score[order], match, n_pos, present


def curves_from_matches(label, match, n_pos, present):
    """Precision and recall lists (None for a class without data), see calc_* below."""
    prec, rec = [None] * len(n_pos), [None] * len(n_pos)
    for k in numpy.flatnonzero(present):
        match_k = match[label == k]
        tp = numpy.cumsum(match_k == 1)
        fp = numpy.cumsum(match_k == 0)
        with numpy.errstate(invalid='ignore', divide='ignore'):
            prec[k] = tp / (fp + tp)
        if n_pos[k] > 0:
            rec[k] = tp / n_pos[k]
    return prec, rec


def calc_detection_voc_prec_rec(pred_bboxes, pred_labels, pred_scores, gt_bboxes,
                                gt_labels, gt_difficults=None, iou_thresh=0.5):
    """Match detections to ground truth and return the per-class PR curves.

    Args: as :func:`eval_detection_voc`.

    Returns:
        tuple of two lists of length n_class (max label + 1): ``prec[k]`` and ``rec[k]``
        are (D_k,) float64 arrays over the D_k detections of class k by decreasing score;
        ``prec[k]`` is None when class k appears neither in the predictions nor in the
        ground truth, ``rec[k]`` also when it has no non-difficult ground truth.
    """
    pred_bboxes, pred_labels, pred_scores, gt_bboxes, gt_labels, gt_difficults = (
        _check_detection_inputs(pred_bboxes, pred_labels, pred_scores, gt_bboxes, gt_labels,
                                gt_difficults))
    pred_bboxes = [b.reshape(-1, 4).astype(numpy.float64) for b in pred_bboxes]
    gt_bboxes = [b.reshape(-1, 4).astype(numpy.float64) for b in gt_bboxes]
    ious = [bbox_ops.bbox_iou(p, g) for p, g in zip(pred_bboxes, gt_bboxes)]
    label, _, match, n_pos, present = match_detections(
        ious, pred_labels, pred_scores, gt_labels, gt_difficults, iou_thresh)
    return curves_from_matches(label, match, n_pos, present)


def calc_detection_voc_ap(prec, rec, use_07_metric=False):
    """Average precision of each class from its precision/recall curve.

    Args:
        prec, rec (lists): as returned by :func:`calc_detection_voc_prec_rec`.
        use_07_metric (bool): True: the VOC2007 11-point interpolation (mean of the best
            precision at recall >= 0, 0.1, ..., 1); False: the area under the
            interpolated curve (VOC2010 and later).

    Returns:
        (n_class,) float64: AP per class, nan where ``prec`` or ``rec`` is None.
    """
    ap = numpy.full(len(prec), numpy.nan)
    for k, (p, r) in enumerate(zip(prec, rec)):
        if p is None or r is None:
            continue
        p = numpy.nan_to_num(p)
        if use_07_metric:
            reached = r[None, :] >= numpy.arange(0.0, 1.1, 0.1)[:, None]
            ap[k] = numpy.where(reached, p[None, :], 0.0).max(axis=1, initial=0).mean()
            continue
        precision = numpy.r_[0.0, p, 0.0]
        recall = numpy.r_[0.0, r, 1.0]
        precision = numpy.maximum.accumulate(precision[::-1])[::-1]
        steps = numpy.flatnonzero(recall[1:] != recall[:-1])
        ap[k] = numpy.sum((recall[steps + 1] - recall[steps]) * precision[steps + 1])
    return ap


def eval_detection_voc(pred_bboxes, pred_labels, pred_scores, gt_bboxes, gt_labels,
                       gt_difficults=None, iou_thresh=0.5, use_07_metric=False):
    """Evaluate detections with the PASCAL VOC protocol.

    Each argument is an iterable with one array per image:

        pred_bboxes    (R, 4) float   (x_min, y_min, x_max, y_max) in pixels
        pred_labels    (R,) int       0-based class
        pred_scores    (R,) float     confidence
        gt_bboxes      (R', 4) float
        gt_labels      (R',) int
        gt_difficults  (R',) bool     ignored boxes; None: none is difficult

    A detection claims the same-class ground truth of highest IoU; at IoU >= iou_thresh
    the first claim (by score) of a box is a true positive, a later one a false positive,
    and a claim of a difficult box counts as neither.

    Returns:
        dict: ``'ap'`` (n_class,) float64 AP per class (nan for a class absent from both
        or with only difficult boxes) and ``'map'`` their nanmean (float).

    Raises:
        ValueError: naming the argument and the image: a box array not of shape (R, 4),
            a NaN or infinite coordinate, a negative label, or counts that differ.

    >>> bbox = [numpy.array([[0, 0, 10, 10]], numpy.float32)]
    >>> label = [numpy.array([0])]
    >>> float(eval_detection_voc(bbox, label, [numpy.array([0.9])], bbox, label)['map'])
    1.0
    """
    if not 0 <= iou_thresh <= 1:
        raise errors.UsageError(f'iou_thresh: expected a value in [0, 1], got {iou_thresh}')
    prec, rec = calc_detection_voc_prec_rec(pred_bboxes, pred_labels, pred_scores,
                                            gt_bboxes, gt_labels, gt_difficults, iou_thresh)
    ap = calc_detection_voc_ap(prec, rec, use_07_metric=use_07_metric)
    with numpy.errstate(invalid='ignore'):
        mean = float(numpy.nanmean(ap)) if numpy.isfinite(ap).any() else float('nan')
    return {'ap': ap, 'map': mean}
