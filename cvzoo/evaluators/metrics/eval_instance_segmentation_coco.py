"""COCO instance segmentation metric (mask AP and AR), as pycocotools' 'segm' mode."""

import numpy

from cvzoo.evaluators.metrics import _inputs, coco_protocol
from cvzoo.evaluators.metrics import eval_detection_coco as detection_coco


def _mask_intersections(pred_masks, gt_masks):
    """Flat per-image intersection tables and the offset of each image in them."""
    tables, offsets = [], [0]
    for i, (pred_mask, gt_mask) in enumerate(zip(pred_masks, gt_masks)):
        if gt_mask.ndim != 3 or pred_mask.ndim != 3 or pred_mask.shape[1:] != gt_mask.shape[1:]:
            raise ValueError(f'pred_masks[{i}]: expected an (R, H, W) array of the image size '
                             f'of gt_masks[{i}] {gt_mask.shape}, got {pred_mask.shape}')
        # NOTE: float64 products of 0/1 are exact counts for any image size.
        n_pixel = gt_mask.shape[1] * gt_mask.shape[2]
        flat_pred = pred_mask.reshape(len(pred_mask), n_pixel).astype(numpy.float64)
        flat_gt = gt_mask.reshape(len(gt_mask), n_pixel).astype(numpy.float64)
        tables.append((flat_pred @ flat_gt.T).ravel())
        offsets.append(offsets[-1] + tables[-1].size)
    return numpy.concatenate([numpy.zeros(0)] + tables), numpy.array(offsets)


def _table_intersection(table, offsets, det_img, det_local, gt_local, n_gt):
    """Return intersection_fn for coco_protocol.match reading the per-image tables."""

    def intersection(det_idx, gt_idx):
        img = coco_protocol._take(det_img, det_idx)[:, :, None]
        flat = (offsets[img] + coco_protocol._take(det_local, det_idx)[:, :, None]
                * n_gt[img] + coco_protocol._take(gt_local, gt_idx)[:, None, :])
        valid = (det_idx >= 0)[:, :, None] & (gt_idx >= 0)[:, None, :]
        return numpy.where(valid, coco_protocol._take(table, numpy.where(valid, flat, -1)),
                           0.0)

    return intersection


def eval_instance_segmentation_coco(pred_masks, pred_labels, pred_scores, gt_masks, gt_labels,
                                    gt_areas=None, gt_crowdeds=None):
    """Evaluate instance masks with the COCO protocol, as COCOeval(iouType='segm').

    Each argument is an iterable with one array per image:

        pred_masks   (R, H, W) bool
        pred_labels  (R,) int      0-based class
        pred_scores  (R,) float
        gt_masks     (R', H, W) bool
        gt_labels    (R',) int
        gt_areas     (R',) float   area for the small/medium/large ranges; None: mask areas
        gt_crowdeds  (R',) bool    crowd regions; None: none

    Returns:
        dict: the keys of :func:`eval_detection_coco`, computed with mask IoU.
    """
    pred_masks = [m.astype(bool) for m in _inputs.as_list('pred_masks', pred_masks)]
    n_img = len(pred_masks)
    gt_masks = [m.astype(bool) for m in _inputs.as_list('gt_masks', gt_masks, n_img)]
    pred_labels = _inputs.as_list('pred_labels', pred_labels, n_img)
    pred_scores = _inputs.as_list('pred_scores', pred_scores, n_img)
    gt_labels = _inputs.as_list('gt_labels', gt_labels, n_img)
    n_pred, n_gt = [len(m) for m in pred_masks], [len(m) for m in gt_masks]
    _inputs.check_rows('pred_labels', pred_labels, (), n_pred)
    _inputs.check_rows('pred_scores', pred_scores, (), n_pred)
    _inputs.check_rows('gt_labels', gt_labels, (), n_gt)
    table, offsets = _mask_intersections(pred_masks, gt_masks)
    det_area = numpy.concatenate([numpy.zeros(0)] + [m.sum(axis=(1, 2)) for m in pred_masks])
    gt_mask_area = numpy.concatenate([numpy.zeros(0)] + [m.sum(axis=(1, 2)) for m in gt_masks])
    det_img = numpy.repeat(numpy.arange(n_img), n_pred)
    gt_img = numpy.repeat(numpy.arange(n_img), n_gt)
    det_local = numpy.concatenate([numpy.zeros(0, int)] + [numpy.arange(n) for n in n_pred])
    gt_local = numpy.concatenate([numpy.zeros(0, int)] + [numpy.arange(n) for n in n_gt])
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
    intersection_fn = _table_intersection(table, offsets, det_img, det_local, gt_local,
                                          numpy.array(n_gt + [0]))
    return detection_coco.evaluate(
        det_img, _inputs.flatten(pred_labels, numpy.int64)[0],
        _inputs.flatten(pred_scores, numpy.float64)[0], det_area, gt_img,
        _inputs.flatten(gt_labels, numpy.int64)[0], gt_area, gt_crowd, intersection_fn,
        det_area, gt_mask_area)
