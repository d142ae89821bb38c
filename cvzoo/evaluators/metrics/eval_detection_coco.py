"""COCO box metrics (AP at IoU .50:.95, .50, .75, by area; AR at 1/10/100 detections)."""

import numpy

from cvzoo import errors
from cvzoo.evaluators.metrics import _inputs, coco_protocol


def _box_intersection(pred_xywh, gt_xywh):
    """Return intersection_fn for coco_protocol.iou over (N, 4) and (M, 4) x, y, w, h."""

    def intersection(det_idx, gt_idx):
        d = coco_protocol._take(pred_xywh, det_idx)[:, :, None, :]
        g = coco_protocol._take(gt_xywh, gt_idx)[:, None, :, :]
        # NOTE: the same arithmetic as pycocotools' bbIou (x + w, on x, y, w, h boxes),
        # so that IoUs sitting on a threshold round the same way.
        w = numpy.minimum(d[..., 0] + d[..., 2], g[..., 0] + g[..., 2])
        w -= numpy.maximum(d[..., 0], g[..., 0])
        h = numpy.minimum(d[..., 1] + d[..., 3], g[..., 1] + g[..., 3])
        h -= numpy.maximum(d[..., 1], g[..., 1])
        return numpy.where((w > 0) & (h > 0), w * h, 0.0)

    return intersection


def _to_xywh(bbox):
    xywh = numpy.array(bbox, numpy.float64).reshape(-1, 4)
    xywh[:, 2:] -= xywh[:, :2]
    return xywh


def eval_detection_coco(pred_bboxes, pred_labels, pred_scores, gt_bboxes, gt_labels,
                        gt_areas=None, gt_crowdeds=None):
    """Evaluate boxes with the COCO protocol, as pycocotools' COCOeval does.

    Each argument is an iterable with one array per image (N images):

        pred_bboxes  (R, 4) float   (x_min, y_min, x_max, y_max) in pixels
        pred_labels  (R,) int       0-based class
        pred_scores  (R,) float     confidence
        gt_bboxes    (R', 4) float  as pred_bboxes
        gt_labels    (R',) int
        gt_areas     (R',) float    the annotation's area, for the small/medium/large
                                    ranges; None: the box areas
        gt_crowdeds  (R',) bool     crowd regions; None: no crowds

    A detection may match a crowd region any number of times and then counts neither as
    a true nor as a false positive. Only the 100 best detections of each class in each
    image count, as in COCOeval.

    Returns:
        dict: under ``'map/iou=0.50:0.95/area=all/max_dets=100'`` and the eleven other
        ChainerCV keys (``'map/iou=0.50/...'``, ``'map/iou=0.75/...'``,
        ``'map/.../area=small|medium|large/...'``, ``'mar/.../max_dets=1|10|100'``,
        ``'mar/.../area=small|medium|large/max_dets=100'``) a float each, nan where
        pycocotools prints -1 (no ground truth in that range); the same keys with
        ``'ap/'`` and ``'ar/'`` hold (n_class,) float64 arrays per class, nan for a
        class without ground truth; ``'existent_labels'`` the classes present in the
        ground truth or the predictions.

    >>> bbox = [numpy.array([[0, 0, 10, 10]], numpy.float32)]
    >>> label = [numpy.array([0], numpy.int32)]
    >>> result = eval_detection_coco(bbox, label, [numpy.array([0.9])], bbox, label)
    >>> round(result['map/iou=0.50:0.95/area=all/max_dets=100'], 4)
    1.0
    """
    pred_bboxes = _inputs.as_list('pred_bboxes', pred_bboxes)
    n_img = len(pred_bboxes)
    pred_labels = _inputs.as_list('pred_labels', pred_labels, n_img)
    pred_scores = _inputs.as_list('pred_scores', pred_scores, n_img)
    gt_bboxes = _inputs.as_list('gt_bboxes', gt_bboxes, n_img)
    gt_labels = _inputs.as_list('gt_labels', gt_labels, n_img)
    gt_areas = _inputs.as_list('gt_areas', gt_areas, n_img)
    gt_crowdeds = _inputs.as_list('gt_crowdeds', gt_crowdeds, n_img)
    pred_bboxes = [b.reshape(-1, 4) if b.size == 0 else b for b in pred_bboxes]
    gt_bboxes = [b.reshape(-1, 4) if b.size == 0 else b for b in gt_bboxes]
    _inputs.check_rows('pred_bboxes', pred_bboxes, (4,))
    _inputs.check_rows('gt_bboxes', gt_bboxes, (4,))
    _inputs.check_finite('pred_bboxes', pred_bboxes)
    _inputs.check_finite('gt_bboxes', gt_bboxes)
    n_pred = [len(b) for b in pred_bboxes]
    n_gt = [len(b) for b in gt_bboxes]
    _inputs.check_rows('pred_labels', pred_labels, (), n_pred)
    _inputs.check_rows('pred_scores', pred_scores, (), n_pred)
    _inputs.check_rows('gt_labels', gt_labels, (), n_gt)
    _inputs.check_labels('pred_labels', pred_labels)
    _inputs.check_labels('gt_labels', gt_labels)
    for name, values in (('gt_areas', gt_areas), ('gt_crowdeds', gt_crowdeds)):
        if values is not None:
            _inputs.check_rows(name, values, (), n_gt)

    pred_bbox, det_img = _inputs.flatten(pred_bboxes, numpy.float64, (4,))
    gt_bbox, gt_img = _inputs.flatten(gt_bboxes, numpy.float64, (4,))
    pred_xywh, gt_xywh = _to_xywh(pred_bbox), _to_xywh(gt_bbox)
    det_area = pred_xywh[:, 2] * pred_xywh[:, 3]
    gt_box_area = gt_xywh[:, 2] * gt_xywh[:, 3]
    return evaluate(
        det_img, _inputs.flatten(pred_labels, numpy.int64)[0],
        _inputs.flatten(pred_scores, numpy.float64)[0], det_area,
        gt_img, _inputs.flatten(gt_labels, numpy.int64)[0],
        gt_box_area if gt_areas is None else _inputs.flatten(gt_areas, numpy.float64)[0],
        (numpy.zeros(len(gt_img), bool) if gt_crowdeds is None
         else _inputs.flatten(gt_crowdeds, bool)[0]),
        _box_intersection(pred_xywh, gt_xywh), det_area, gt_box_area)


def evaluate(det_img, det_label, det_score, det_area, gt_img, gt_label, gt_area, gt_crowd,
             intersection_fn, det_iou_area, gt_iou_area):
    """Run the COCO protocol on flat arrays (shared with the mask metric)."""
    for name, label in (('pred_labels', det_label), ('gt_labels', gt_label)):
        problem = _inputs.label_problem(label)
        if problem is not None:
            raise errors.UsageError(f'{name}: {problem}')
    problem = coco_protocol.Problem(det_img, det_label, det_score, det_area, gt_img,
                                    gt_label, gt_crowd, gt_area)
    det_iou_area = det_iou_area[problem.det_index]
    gt_iou_area = gt_iou_area[problem.gt_index]

    def iou(det_idx, gt_idx):
        return coco_protocol.iou(problem, intersection_fn, det_idx, gt_idx, det_iou_area,
                                 gt_iou_area)

    return coco_protocol.evaluate(problem, iou)
