"""PASCAL VOC instance segmentation metric: AP of masks at one IoU threshold."""

import numpy

from cvzoo.evaluators.metrics import eval_detection_voc as detection_voc
from cvzoo.utils import bbox as bbox_ops


def calc_instance_segmentation_voc_prec_rec(pred_masks, pred_labels, pred_scores, gt_masks,
                                            gt_labels, iou_thresh=0.5):
    """Per-class precision and recall curves of masks (see calc_detection_voc_prec_rec)."""
    pred_masks, pred_labels, pred_scores, gt_masks, gt_labels, _ = (
        detection_voc._check_detection_inputs(pred_masks, pred_labels, pred_scores, gt_masks,
                                              gt_labels, None, bbox_name='masks'))
    ious = []
    for i, (pred_mask, gt_mask) in enumerate(zip(pred_masks, gt_masks)):
        if pred_mask.ndim != 3 or gt_mask.ndim != 3 or pred_mask.shape[1:] != gt_mask.shape[1:]:
            raise ValueError(f'pred_masks[{i}]: expected an (R, H, W) array of the image size '
                             f'of gt_masks[{i}] {gt_mask.shape}, got {pred_mask.shape}')
        if len(pred_mask) and len(gt_mask):
            ious.append(bbox_ops.mask_iou(pred_mask.astype(bool), gt_mask.astype(bool)))
        else:
            ious.append(numpy.zeros((len(pred_mask), len(gt_mask))))
    label, _, match, n_pos, present = detection_voc.match_detections(
        ious, pred_labels, pred_scores, gt_labels, None, iou_thresh)
    return detection_voc.curves_from_matches(label, match, n_pos, present)


def eval_instance_segmentation_voc(pred_masks, pred_labels, pred_scores, gt_masks, gt_labels,
                                   iou_thresh=0.5, use_07_metric=False):
    """Evaluate instance masks with the PASCAL VOC protocol (mask IoU instead of box IoU).

    Each argument is an iterable with one array per image:

        pred_masks   (R, H, W) bool
        pred_labels  (R,) int      0-based class
        pred_scores  (R,) float
        gt_masks     (R', H, W) bool
        gt_labels    (R',) int

    Returns:
        dict: ``'ap'`` (n_class,) float64 (nan for a class absent from both) and
        ``'map'`` (float), as :func:`eval_detection_voc`.
    """
    if not 0 <= iou_thresh <= 1:
        raise ValueError(f'iou_thresh: expected a value in [0, 1], got {iou_thresh}')
    prec, rec = calc_instance_segmentation_voc_prec_rec(
        pred_masks, pred_labels, pred_scores, gt_masks, gt_labels, iou_thresh)
    ap = detection_voc.calc_detection_voc_ap(prec, rec, use_07_metric=use_07_metric)
    finite = ap[~numpy.isnan(ap)]
    return {'ap': ap, 'map': float(finite.mean()) if finite.size else float('nan')}
