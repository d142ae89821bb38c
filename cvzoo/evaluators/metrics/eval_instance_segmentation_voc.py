"""PASCAL VOC instance segmentation metric: AP of masks at one IoU threshold."""

import numpy

from cvzoo import errors
from cvzoo.evaluators.metrics import eval_detection_voc as detection_voc
from cvzoo.evaluators.metrics import run_length_masks


def mask_ious(pred_masks, pred_labels, gt_masks, gt_labels):
    """One (R, R') mask IoU array per image; pairs of different classes are left at 0.

    Args: lists with one entry per image, as :func:`eval_instance_segmentation_voc`
    (masks already as RunLengthMasks).
    """
    n_pred = numpy.array([len(m) for m in pred_masks], numpy.int64)
    n_gt = numpy.array([len(m) for m in gt_masks], numpy.int64)
    pred_runs = run_length_masks.RunLengthMasks.concatenate(pred_masks)
    gt_runs = run_length_masks.RunLengthMasks.concatenate(gt_masks)
    pred_first = numpy.r_[0, numpy.cumsum(n_pred)]
    gt_first = numpy.r_[0, numpy.cumsum(n_gt)]
    # every (detection, ground truth) pair of each image, image by image
    n_pair = n_pred * n_gt
    img = numpy.repeat(numpy.arange(len(n_pred)), n_pair)
    local = numpy.arange(n_pair.sum()) - numpy.repeat(numpy.cumsum(n_pair) - n_pair, n_pair)
    det = pred_first[img] + local // numpy.maximum(n_gt[img], 1)
    gt = gt_first[img] + local % numpy.maximum(n_gt[img], 1)
    pred_label = numpy.concatenate([numpy.zeros(0, numpy.int64)] + list(pred_labels))
    gt_label = numpy.concatenate([numpy.zeros(0, numpy.int64)] + list(gt_labels))
    same = pred_label[det] == gt_label[gt]
    iou = numpy.zeros(len(det))
    inter = pred_runs.intersection(det[same], gt_runs, gt[same])
    union = pred_runs.area[det[same]] + gt_runs.area[gt[same]] - inter
    iou[same] = numpy.where(union > 0, inter / numpy.maximum(union, 1), 0.0)
    pair_first = numpy.r_[0, numpy.cumsum(n_pair)]
    return [iou[pair_first[i]:pair_first[i + 1]].reshape(n_pred[i], n_gt[i])
            for i in range(len(n_pred))]


def calc_instance_segmentation_voc_prec_rec(pred_masks, pred_labels, pred_scores, gt_masks,
                                            gt_labels, iou_thresh=0.5):
    """Per-class precision and recall curves of masks (see calc_detection_voc_prec_rec)."""
    pred_masks = run_length_masks.per_image('pred_masks', pred_masks)
    gt_masks = run_length_masks.per_image('gt_masks', gt_masks, len(pred_masks))
    run_length_masks.check_same_sizes(pred_masks, gt_masks)
    # NOTE: the checks see one placeholder row per mask; the masks are checked above.
    _, pred_labels, pred_scores, _, gt_labels, _ = detection_voc._check_detection_inputs(
        [numpy.zeros(len(m)) for m in pred_masks], pred_labels, pred_scores,
        [numpy.zeros(len(m)) for m in gt_masks], gt_labels, None, bbox_name='masks')
    ious = mask_ious(pred_masks, pred_labels, gt_masks, gt_labels)
    label, _, match, n_pos, present = detection_voc.match_detections(
        ious, pred_labels, pred_scores, gt_labels, None, iou_thresh)
    return detection_voc.curves_from_matches(label, match, n_pos, present)


def eval_instance_segmentation_voc(pred_masks, pred_labels, pred_scores, gt_masks, gt_labels,
                                   iou_thresh=0.5, use_07_metric=False):
    """Evaluate instance masks with the PASCAL VOC protocol (mask IoU instead of box IoU).

    Each argument is an iterable with one array per image:

        pred_masks   (R, H, W) bool, or a RunLengthMasks of the image's R masks
        pred_labels  (R,) int      0-based class
        pred_scores  (R,) float
        gt_masks     (R', H, W) bool, or a RunLengthMasks
        gt_labels    (R',) int

    Returns:
        dict: ``'ap'`` (n_class,) float64 (nan for a class absent from both) and
        ``'map'`` (float), as :func:`eval_detection_voc`.
    """
    if not 0 <= iou_thresh <= 1:
        raise errors.UsageError(f'iou_thresh: expected a value in [0, 1], got {iou_thresh}')
    prec, rec = calc_instance_segmentation_voc_prec_rec(
        pred_masks, pred_labels, pred_scores, gt_masks, gt_labels, iou_thresh)
    ap = detection_voc.calc_detection_voc_ap(prec, rec, use_07_metric=use_07_metric)
    finite = ap[~numpy.isnan(ap)]
    return {'ap': ap, 'map': float(finite.mean()) if finite.size else float('nan')}
