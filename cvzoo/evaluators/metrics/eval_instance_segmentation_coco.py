"""COCO instance segmentation metric (mask AP and AR), as pycocotools' 'segm' mode."""

import numpy

from cvzoo.evaluators.metrics import _inputs, run_length_masks
from cvzoo.evaluators.metrics import eval_detection_coco as detection_coco


def _pair_intersection(pred_runs, gt_runs):
    """Return intersection_fn for coco_protocol.iou over all images' masks."""

    def intersection(det_idx, gt_idx):
        det = numpy.broadcast_to(det_idx[:, :, None], det_idx.shape + gt_idx.shape[1:])
        gt = numpy.broadcast_to(gt_idx[:, None, :], det.shape)
        valid = (det >= 0) & (gt >= 0)
        inter = numpy.zeros(det.shape)
        inter[valid] = pred_runs.intersection(det[valid], gt_runs, gt[valid])
        return inter

    return intersection


def eval_instance_segmentation_coco(pred_masks, pred_labels, pred_scores, gt_masks, gt_labels,
                                    gt_areas=None, gt_crowdeds=None):
    """Evaluate instance masks with the COCO protocol, as COCOeval(iouType='segm').

    Each argument is an iterable with one array per image:

        pred_masks   (R, H, W) bool, or a RunLengthMasks of the image's R masks
        pred_labels  (R,) int      0-based class
        pred_scores  (R,) float
        gt_masks     (R', H, W) bool, or a RunLengthMasks
        gt_labels    (R',) int
        gt_areas     (R',) float   area for the small/medium/large ranges; None: mask areas
        gt_crowdeds  (R',) bool    crowd regions; None: none

    Masks are compared as runs (:class:`RunLengthMasks`), as pycocotools compares RLEs, so
    an evaluation of COCO's size fits in memory when the masks come encoded.

    Returns:
        dict: the keys of :func:`eval_detection_coco`, computed with mask IoU.
    """
    pred_masks = run_length_masks.per_image('pred_masks', pred_masks)
    n_img = len(pred_masks)
    gt_masks = run_length_masks.per_image('gt_masks', gt_masks, n_img)
    run_length_masks.check_same_sizes(pred_masks, gt_masks)
    pred_labels = _inputs.as_list('pred_labels', pred_labels, n_img)
    pred_scores = _inputs.as_list('pred_scores', pred_scores, n_img)
    gt_labels = _inputs.as_list('gt_labels', gt_labels, n_img)
    n_pred, n_gt = [len(m) for m in pred_masks], [len(m) for m in gt_masks]
    _inputs.check_rows('pred_labels', pred_labels, (), n_pred)
    _inputs.check_rows('pred_scores', pred_scores, (), n_pred)
    _inputs.check_rows('gt_labels', gt_labels, (), n_gt)
    _inputs.check_labels('pred_labels', pred_labels)
    _inputs.check_labels('gt_labels', gt_labels)
    pred_runs = run_length_masks.RunLengthMasks.concatenate(pred_masks)
    gt_runs = run_length_masks.RunLengthMasks.concatenate(gt_masks)
    det_area = pred_runs.area.astype(numpy.float64)
    gt_mask_area = gt_runs.area.astype(numpy.float64)
    det_img = numpy.repeat(numpy.arange(n_img), n_pred)
    gt_img = numpy.repeat(numpy.arange(n_img), n_gt)
    gt_area = gt_mask_area
    if gt_areas is not None:
        gt_areas = _inputs.as_list('gt_areas', gt_areas, n_img)
        _inputs.check_rows('gt_areas', gt_areas, (), n_gt)
        gt_area = _inputs.flatten(gt_areas, numpy.float64)[0]
    gt_crowd = numpy.zeros(len(gt_img), bool)
    if gt_crowdeds is not None:
        gt_crowdeds = _inputs.as_list('gt_crowdeds', gt_crowdeds, n_img)
        _inputs.check_rows('gt_crowdeds', gt_crowdeds, (), n_gt)
        gt_crowd = _inputs.flatten(gt_crowdeds, bool)[0]
    intersection_fn = _pair_intersection(pred_runs, gt_runs)
    return detection_coco.evaluate(
        det_img, _inputs.flatten(pred_labels, numpy.int64)[0],
        _inputs.flatten(pred_scores, numpy.float64)[0], det_area, gt_img,
        _inputs.flatten(gt_labels, numpy.int64)[0], gt_area, gt_crowd, intersection_fn,
        det_area, gt_mask_area)
