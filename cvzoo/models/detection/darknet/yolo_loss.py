"""The YOLOv3 loss of one ``[yolo]`` head: target assignment and the four terms.

Redmon and Farhadi, YOLOv3: An Incremental Improvement, arXiv 2018, with Darknet's
yolo_layer.c: each ground-truth box goes to the anchor (of all the cfg's anchors)
whose shape fits it best (IoU of boxes sharing a centre); when that anchor belongs to
this head, the cell holding the box's centre predicts it. Terms, summed over the batch
and divided by the batch size:

- xy: ``(2 - w * h) * (sigmoid(t_xy) - target_xy)^2`` on assigned cells, target_xy the
  centre's offset inside its cell;
- wh: ``(2 - w * h) * (t_wh - log(gt_wh / anchor_wh))^2`` (w, h as fractions of the
  network input);
- obj: binary cross entropy of the objectness, 1 on assigned cells, 0 elsewhere except
  where the decoded box already overlaps a ground truth by more than ``ignore_thresh``;
- cls: binary cross entropy of each class on assigned cells (one-hot targets).

Not reproduced from AlexeyAB's Darknet: the extra anchors above ``iou_thresh``, the
(C/D/G)IoU box losses and the normalisers. Region (YOLOv2) heads have their own loss,
:mod:`~cvzoo.models.detection.darknet.region_loss`.
"""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.models.detection.darknet import yolo_decoder


def flatten_boxes(bboxes, labels):
    """Per-image boxes and labels as flat arrays, with each box's image index.

    Args:
        bboxes (list of array): per image (R, 4).
        labels (list of array): per image (R,) int class ids.

    Returns:
        tuple: ``image`` (R_all,) int64, ``bbox`` (R_all, 4) float64, ``label`` (R_all,)
        int64.
    """
    image = numpy.concatenate([numpy.full(len(b), i) for i, b in enumerate(bboxes)]
                              + [numpy.zeros(0, int)]).astype(numpy.int64)
    bbox = numpy.concatenate([numpy.asarray(b, numpy.float64).reshape(-1, 4) for b in bboxes]
                             + [numpy.zeros((0, 4))])
    label = numpy.concatenate([numpy.asarray(lb).reshape(-1) for lb in labels]
                              + [numpy.zeros(0, int)]).astype(numpy.int64)
    return image, bbox, label


def grid_cell(center, grid):
    """(row, column) int64 of the (h, w) grid cell holding each (x, y) center fraction."""
    h, w = grid
    column = numpy.clip((center[:, 0] * w).astype(numpy.int64), 0, w - 1)
    row = numpy.clip((center[:, 1] * h).astype(numpy.int64), 0, h - 1)
    return row, column


def shape_iou(size_a, size_b):
    """(R, K) IoU of boxes of sizes (R, 2) and (K, 2) sharing a centre (host NumPy)."""
    inter = numpy.minimum(size_a[:, None], size_b[None]).prod(axis=2)
    return inter / (size_a.prod(axis=1)[:, None] + size_b.prod(axis=1)[None] - inter)


def box_iou(xp, bbox_a, bbox_b):
    """(..., N, R) IoU of (..., N, 4) and (..., R, 4) boxes of module ``xp``."""
    top_left = xp.maximum(bbox_a[..., :, None, :2], bbox_b[..., None, :, :2])
    bottom_right = xp.minimum(bbox_a[..., :, None, 2:], bbox_b[..., None, :, 2:])
    inter = xp.clip(bottom_right - top_left, 0, None).prod(axis=-1)
    area_a = (bbox_a[..., 2:] - bbox_a[..., :2]).prod(axis=-1)
    area_b = (bbox_b[..., 2:] - bbox_b[..., :2]).prod(axis=-1)
    return inter / xp.maximum(area_a[..., :, None] + area_b[..., None, :] - inter, 1e-12)


def assign_targets(head, grid, bboxes, labels):
    """Targets of one head for a batch (host NumPy, vectorised over all boxes).

    Args:
        head (dict): a CfgNetwork head (``anchors``, ``all_anchors``, ``mask``,
            ``n_class``), anchors in network-input pixels.
        grid (tuple of int): (h, w) of the head's map.
        bboxes (list of array): per image (R, 4) (x_min, y_min, x_max, y_max) as
            fractions of the network input.
        labels (list of array): per image (R,) int class ids.

    Returns:
        dict of NumPy arrays, all (B, h, w, A, ...): ``assigned`` bool, ``xy`` and
        ``wh`` (2,) targets, ``scale`` (2 - w * h), ``cls`` (C,) one-hot float32.
    """
    h, w = grid
    n_anchor, n_class = len(head['anchors']), head['n_class']
    shape = (len(bboxes), h, w, n_anchor)
    image, bbox, label = flatten_boxes(bboxes, labels)
    size = bbox[:, 2:] - bbox[:, :2]
    center = (bbox[:, :2] + bbox[:, 2:]) / 2
    insize = head['insize']
    all_anchors = numpy.asarray(head['all_anchors'], numpy.float64) / [insize[1], insize[0]]
    best = shape_iou(size, all_anchors).argmax(axis=1)
    position = numpy.full(len(all_anchors), -1, numpy.int64)  # all anchors -> this head's
    position[list(head['mask'])] = numpy.arange(n_anchor)
    ours = position[best] >= 0
    anchor = position[best][ours]
    image, label, size, center = image[ours], label[ours], size[ours], center[ours]
    row, column = grid_cell(center, grid)
    index = (image, row, column, anchor)
    targets = {'assigned': numpy.zeros(shape, bool),
               'xy': numpy.zeros(shape + (2,), numpy.float32),
               'wh': numpy.zeros(shape + (2,), numpy.float32),
               'scale': numpy.zeros(shape, numpy.float32),
               'cls': numpy.zeros(shape + (n_class,), numpy.float32)}
    targets['assigned'][index] = True
    targets['xy'][index] = center * [w, h] - numpy.stack([column, row], axis=1)
    targets['wh'][index] = numpy.log(size / all_anchors[numpy.asarray(head['mask'])[anchor]])
    targets['scale'][index] = 2 - size[:, 0] * size[:, 1]
    targets['cls'][index + (label,)] = 1
    return targets


def best_truth_iou(xp, pred, bboxes):
    """(B, N) best IoU of each predicted box with the ground truths of its image.

    Args:
        xp: the array module of ``pred``.
        pred (array): (B, N, 4) boxes.
        bboxes (list of array): per image (R, 4) host boxes, in ``pred``'s units.

    Returns:
        array: (B, N) of pred's dtype, 0 for an image without boxes.
    """
    n_max = max([len(b) for b in bboxes] + [1])
    padded = numpy.zeros((len(bboxes), n_max, 4), numpy.float32)
    for i, bbox in enumerate(bboxes):  # a loop over images of the batch, host side
        padded[i, :len(bbox)] = bbox
    return box_iou(xp, pred, xp.asarray(padded, dtype=pred.dtype)).max(axis=-1)


def _ignore_mask(xp, raw, head, bboxes):
    """(B, h, w, A) bool: the decoded box overlaps some ground truth by > ignore_thresh."""
    B, _, h, w = raw.shape
    pred, _ = yolo_decoder.decode_yolo_head(raw, head, head['insize'])
    return (best_truth_iou(xp, pred, bboxes) > head['ignore_thresh']).reshape(B, h, w, -1)


def yolo_head_loss(raw, head, bboxes, labels):
    """The four YOLOv3 loss terms of one head (see the module docstring).

    Args:
        raw (Variable): (B, A * (5 + C), h, w) raw head map.
        head (dict): the CfgNetwork head, with ``insize`` (H, W) added.
        bboxes, labels: as :func:`assign_targets`.

    Returns:
        tuple of 4 Variables: 0-d xy, wh, obj and cls losses.
    """
    xp = backend.get_array_module(raw.array)
    B, _, h, w = raw.shape
    n_anchor, n_class = len(head['anchors']), head['n_class']
    t = F.transpose(F.reshape(raw, (B, n_anchor, 5 + n_class, h, w)), (0, 3, 4, 1, 2))
    targets = assign_targets(head, (h, w), bboxes, labels)
    assigned = xp.asarray(targets['assigned'])
    weight = xp.asarray(targets['scale'] * targets['assigned'], raw.dtype)[..., None]
    xy = F.sum((F.sigmoid(t[..., 0:2]) - xp.asarray(targets['xy'], raw.dtype)) ** 2 * weight)
    wh = F.sum((t[..., 2:4] - xp.asarray(targets['wh'], raw.dtype)) ** 2 * weight)
    ignored = _ignore_mask(xp, raw.array, head, bboxes) & ~assigned
    obj_target = xp.where(ignored, -1, assigned).astype(xp.int32)
    obj = F.sigmoid_cross_entropy(t[..., 4], obj_target, reduce='no')
    cls_target = xp.where(assigned[..., None], xp.asarray(targets['cls']), -1)
    cls = F.sigmoid_cross_entropy(t[..., 5:], cls_target.astype(xp.int32), reduce='no')
    return xy / B, wh / B, F.sum(obj) / B, F.sum(cls) / B
