"""COCO keypoint metric (OKS AP and AR), as pycocotools' COCOeval(iouType='keypoints')."""

import numpy

from cvzoo.evaluators.metrics import _inputs, coco_protocol

# NOTE: pycocotools' kpt_oks_sigmas: the spread of human annotators' clicks for each of
# COCO's 17 person keypoints (nose, eyes, ears, shoulders, elbows, wrists, hips, knees,
# ankles; left before right), relative to the object's scale.
COCO_KEYPOINT_SIGMAS = numpy.array([
    0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87,
    0.87, 0.89, 0.89]) / 10.0


_take = coco_protocol._take


def _oks(pred_point, gt_point, gt_visible, gt_area, gt_xywh, sigmas):
    """Return similarity_fn for coco_protocol.match_similarity: the object keypoint
    similarity of (D, K, 2) detections and (G, K, 2) ground truths in the problem's order.

    A ground truth without labelled points is compared through its box grown by its own
    width and height on each side, as COCOeval does; without a box (NaN) it scores 0.
    """
    variances = (2 * numpy.asarray(sigmas, numpy.float64)) ** 2

    def similarity(det_idx, gt_idx):
        d = _take(pred_point, det_idx)[:, :, None]                  # (n, Dp, 1, K, 2)
        g = _take(gt_point, gt_idx)                                 # (n, Gp, K, 2)
        visible = _take(gt_visible, gt_idx, False)                  # (n, Gp, K)
        box = _take(gt_xywh, gt_idx)[:, :, None]                    # (n, Gp, 1, 4)
        area = _take(gt_area, gt_idx)[:, None, :, None]             # (n, 1, Gp, 1)
        labelled = visible.any(axis=-1)[..., None, None]
        # NOTE: one formula for both of COCOeval's cases: the distance to the interval
        # [low, high] is |d - g| when low = high = g (one of the two terms is 0, and
        # g - d is exactly -(d - g)), and the distance to the grown box otherwise.
        low = numpy.where(labelled, g, box[..., :2] - box[..., 2:])[:, None]
        high = numpy.where(labelled, g, box[..., :2] + 2 * box[..., 2:])[:, None]
        delta = numpy.maximum(low - d, 0.0)
        delta += numpy.maximum(d - high, 0.0)
        delta *= delta
        # NOTE: then COCOeval.computeOks's order of operations, so that a similarity on
        # a threshold rounds the same way.
        e = delta[..., 0] + delta[..., 1]                           # (n, Dp, Gp, K)
        e /= variances
        e /= area + numpy.spacing(1)
        e /= 2
        weight = numpy.where(labelled[..., 0], visible, True)[:, None]
        numpy.exp(numpy.negative(e, out=e), out=e)
        e *= weight
        oks = e.sum(axis=-1)
        oks /= weight.sum(axis=-1)
        return numpy.where(numpy.isnan(oks), 0.0, oks)

    return similarity


def _extent_area(point, valid):
    """(R,) area of the box around each row's valid points (0 without any)."""
    big = numpy.where(valid[..., None], point, numpy.inf)
    small = numpy.where(valid[..., None], point, -numpy.inf)
    size = small.max(axis=1) - big.min(axis=1)
    return numpy.where(valid.any(axis=1), size[:, 0] * size[:, 1], 0.0)


def _ground_truth_arrays(gt_points, gt_visibles, gt_bboxes, gt_areas, gt_crowdeds, n_point):
    """Flat (G, K, 2) points, (G, K) visible, (G, 4) x, y, w, h (NaN: none), area, crowd."""
    gt_point = _inputs.flatten(gt_points, numpy.float64, (n_point, 2))[0]
    gt_visible = _inputs.flatten(gt_visibles, bool, (n_point,))[0]
    gt_xywh = numpy.full((len(gt_point), 4), numpy.nan)
    if gt_bboxes is not None:
        gt_xywh = _inputs.flatten(gt_bboxes, numpy.float64, (4,))[0]
        gt_xywh[:, 2:] -= gt_xywh[:, :2]
    if gt_areas is not None:
        gt_area = _inputs.flatten(gt_areas, numpy.float64)[0]
    elif gt_bboxes is not None:
        gt_area = gt_xywh[:, 2] * gt_xywh[:, 3]
    else:
        gt_area = _extent_area(gt_point, gt_visible)
    gt_crowd = numpy.zeros(len(gt_point), bool) if gt_crowdeds is None \
        else _inputs.flatten(gt_crowdeds, bool)[0]
    return gt_point, gt_visible, gt_xywh, gt_area, gt_crowd


def _per_image(name, values, n_img, tail, n_rows=None):
    """The checked list of (R_i,) + tail arrays (None stays None); empties take the tail."""
    values = _inputs.as_list(name, values, n_img)
    if values is None:
        return None
    values = [v.reshape((0,) + tail) if v.size == 0 else v for v in values]
    _inputs.check_rows(name, values, tail, n_rows)
    return values


def _checked(args, n_point):
    """The per-image lists of ``args`` (a dict by argument name), checked against each
    other; errors name the argument."""
    points = _per_image('pred_points', args['pred_points'], None, (n_point, 2))
    n_img, n_pred = len(points), [len(p) for p in points]
    out = {'pred_points': points}
    out['gt_points'] = _per_image('gt_points', args['gt_points'], n_img, (n_point, 2))
    n_gt = [len(p) for p in out['gt_points']]
    for name, tail, n_rows in (('pred_labels', (), n_pred), ('pred_scores', (), n_pred),
                               ('gt_visibles', (n_point,), n_gt), ('gt_labels', (), n_gt),
                               ('gt_bboxes', (4,), n_gt), ('gt_areas', (), n_gt),
                               ('gt_crowdeds', (), n_gt)):
        out[name] = _per_image(name, args[name], n_img, tail, n_rows)
    _inputs.check_finite('pred_points', points)
    # NOTE: an unlabelled point's coordinates are never used (COCO writes 0, 0).
    _inputs.check_finite('gt_points', [numpy.where(v[..., None], p, 0.0)
                                       for p, v in zip(out['gt_points'], out['gt_visibles'])])
    if out['gt_bboxes'] is not None:
        _inputs.check_finite('gt_bboxes', out['gt_bboxes'])
    _inputs.check_labels('pred_labels', out['pred_labels'])
    _inputs.check_labels('gt_labels', out['gt_labels'])
    return out, n_gt


def eval_keypoint_detection_coco(pred_points, pred_labels, pred_scores, gt_points, gt_visibles,
                                 gt_labels, gt_bboxes=None, gt_areas=None, gt_crowdeds=None, *,
                                 sigmas=None):
    """Evaluate keypoints with the COCO protocol, as COCOeval(iouType='keypoints') does.

    Each argument is an iterable with one array per image (N images, K points each):

        pred_points  (R, K, 2) float  (x, y) in pixels (ChainerCV's were (y, x))
        pred_labels  (R,) int         0-based class
        pred_scores  (R,) float       confidence of the instance
        gt_points    (R', K, 2) float (x, y)
        gt_visibles  (R', K) bool     the point is labelled (COCO's v > 0)
        gt_labels    (R',) int
        gt_bboxes    (R', 4) float    (x_min, y_min, x_max, y_max); a ground truth with no
                                      labelled point is matched through it (None: such
                                      a ground truth matches nothing)
        gt_areas     (R',) float      the object's area: the OKS scale and the
                                      medium/large ranges; None: the box area, or
                                      without boxes the labelled points' extent
        gt_crowdeds  (R',) bool       crowd regions; None: none

    Similarity is the object keypoint similarity (OKS) with ``sigmas`` (default
    :data:`COCO_KEYPOINT_SIGMAS`, K = 17). Ground truths that are crowds or have no
    labelled point are ignored: a detection may match them and then counts neither as
    a true nor as a false positive (a crowd any number of times). A detection's own
    area, for the ranges, is the box around its points. Only the 20 best detections of
    each class in each image count.

    Returns:
        dict: the ten numbers of COCOeval's keypoint summary as floats, nan where
        pycocotools prints -1: ``'map/iou=0.50:0.95/area=all/max_dets=20'``,
        ``'map/iou=0.50/...'``, ``'map/iou=0.75/...'``, ``'map/iou=0.50:0.95/
        area=medium|large/max_dets=20'`` and the same five under ``'mar/'``; the same keys
        under ``'ap/'`` and ``'ar/'`` hold (n_class,) float64 arrays per class; and
        ``'existent_labels'``.

    Raises:
        ValueError: an argument of the wrong length or shape (naming it), K not equal to
            the number of sigmas, NaN or infinite points, or a negative label.

    >>> point = [numpy.array([[[10, 10], [20, 30]]], numpy.float32)]
    >>> label, visible = [numpy.array([0])], [numpy.ones((1, 2), bool)]
    >>> result = eval_keypoint_detection_coco(point, label, [numpy.array([0.9])], point,
    ...                                       visible, label, sigmas=[0.1, 0.1])
    >>> round(result['map/iou=0.50:0.95/area=all/max_dets=20'], 4)
    1.0
    """
    sigmas = COCO_KEYPOINT_SIGMAS if sigmas is None else numpy.asarray(sigmas, numpy.float64)
    n_point = len(sigmas)
    args, n_gt = _checked(dict(
        pred_points=pred_points, pred_labels=pred_labels, pred_scores=pred_scores,
        gt_points=gt_points, gt_visibles=gt_visibles, gt_labels=gt_labels,
        gt_bboxes=gt_bboxes, gt_areas=gt_areas, gt_crowdeds=gt_crowdeds), n_point)
    pred_point, det_img = _inputs.flatten(args['pred_points'], numpy.float64, (n_point, 2))
    gt_point, gt_visible, gt_xywh, gt_area, gt_crowd = _ground_truth_arrays(
        args['gt_points'], args['gt_visibles'], args['gt_bboxes'], args['gt_areas'],
        args['gt_crowdeds'], n_point)
    gt_img = numpy.repeat(numpy.arange(len(n_gt)), n_gt)
    # NOTE: COCO's loadRes gives a detection the area of the box around all its points.
    det_area = _extent_area(pred_point, numpy.ones(pred_point.shape[:2], bool))
    problem = coco_protocol.Problem(
        det_img, _inputs.flatten(args['pred_labels'], numpy.int64)[0],
        _inputs.flatten(args['pred_scores'], numpy.float64)[0], det_area, gt_img,
        _inputs.flatten(args['gt_labels'], numpy.int64)[0], gt_crowd, gt_area,
        max_det=coco_protocol.KEYPOINTS.max_dets[-1], gt_ignore=~gt_visible.any(axis=1))
    det, gt = problem.det_index, problem.gt_index
    similarity = _oks(pred_point[det], gt_point[gt], gt_visible[gt], gt_area[gt],
                      gt_xywh[gt], sigmas)
    return coco_protocol.evaluate(problem, similarity, coco_protocol.KEYPOINTS,
                                  cell_size=2 * n_point)
