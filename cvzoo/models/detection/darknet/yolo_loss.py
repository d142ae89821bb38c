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

The targets are assigned on the boxes' device from boxes padded to fixed shapes, with no
host synchronisation (a training step can be one CUDA graph).

Not reproduced from AlexeyAB's Darknet: the extra anchors above ``iou_thresh``, the
(C/D/G)IoU box losses and the normalisers. Region (YOLOv2) heads have their own loss,
:mod:`~cvzoo.models.detection.darknet.region_loss`.
"""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.models.detection.darknet import yolo_decoder


def grid_cell(xp, center, grid):
    """(row, column) int64 of the (h, w) grid cell holding each (..., 2) (x, y) centre
    fraction."""
    h, w = grid
    column = xp.clip((center[..., 0] * w).astype(numpy.int64), 0, w - 1)
    row = xp.clip((center[..., 1] * h).astype(numpy.int64), 0, h - 1)
    return row, column


def shape_iou(xp, size_a, size_b):
    """(..., K) IoU of boxes of sizes (..., 2) and (K, 2) sharing a centre."""
    inter = xp.minimum(size_a[..., None, :], size_b).prod(axis=-1)
    return inter / (size_a.prod(axis=-1)[..., None] + size_b.prod(axis=-1) - inter)


def box_iou(xp, bbox_a, bbox_b):
    """(..., N, R) IoU of (..., N, 4) and (..., R, 4) boxes of module ``xp``."""
    top_left = xp.maximum(bbox_a[..., :, None, :2], bbox_b[..., None, :, :2])
    bottom_right = xp.minimum(bbox_a[..., :, None, 2:], bbox_b[..., None, :, 2:])
    inter = xp.clip(bottom_right - top_left, 0, None).prod(axis=-1)
    area_a = (bbox_a[..., 2:] - bbox_a[..., :2]).prod(axis=-1)
    area_b = (bbox_b[..., 2:] - bbox_b[..., :2]).prod(axis=-1)
    return inter / xp.maximum(area_a[..., :, None] + area_b[..., None, :] - inter, 1e-12)


def box_shapes(bboxes):
    """``size`` and ``center`` (B, R, 2) float64 of (B, R, 4) boxes (the host code's
    precision, so that the targets do not depend on where they are computed)."""
    bbox = bboxes.astype(numpy.float64)
    return bbox[..., 2:] - bbox[..., :2], (bbox[..., :2] + bbox[..., 2:]) / 2


def flat_slot(xp, row, column, anchor, shape):
    """(B, R) index of each box's (image, row, column, anchor) entry in the flattened
    (B, h, w, A) targets."""
    _, h, w, n_anchor = shape
    image = xp.arange(shape[0])[:, None]
    return ((image * h + row) * w + column) * n_anchor + anchor


def write_index(slot, valid, n_slot):
    """(B, R) where each box writes its targets: its ``slot``, or the dummy slot past the
    end of the ``n_slot`` targets (``n_slot``, dropped after the scatter) for the boxes
    that write nothing.

    Those are the invalid ones (padding, another head's) and those that a later valid box
    of the same image overwrites: the later one wins, as in Darknet, without relying on the
    order of a scatter's duplicate indexes, which a GPU does not define. Shapes depend on
    the batch's shapes only (no boolean mask), so that a step can be one CUDA graph.
    """
    xp = backend.get_array_module(slot)
    order = xp.arange(slot.shape[1])
    later = order[:, None] < order[None, :]  # (R, R): box r2 comes after box r
    overwritten = ((slot[:, :, None] == slot[:, None, :]) & later
                   & valid[:, None, :]).any(axis=2)
    return xp.where(valid & ~overwritten, slot, n_slot)


def scatter(index, values, n_slot, fill, dtype):
    """A (n_slot, ...) array of ``dtype`` holding ``values`` (B, R, ...) at ``index``
    (:func:`write_index`) and ``fill`` elsewhere."""
    xp = backend.get_array_module(index)
    out = xp.full((n_slot + 1,) + values.shape[2:], fill, dtype)
    out[index] = values.astype(dtype)
    return out[:-1]


def _anchor_tables(head, reference):
    """The head's anchor tables, on ``reference``'s device: every anchor of the cfg as
    fractions of the input (K, 2) float64, the position of each in this head (K,) int64
    (-1: another head's), and this head's anchors (A, 2)."""
    insize = head['insize']
    all_anchors = numpy.asarray(head['all_anchors'], numpy.float64) / [insize[1], insize[0]]
    position = numpy.full(len(all_anchors), -1, numpy.int64)
    position[list(head['mask'])] = numpy.arange(len(head['mask']))
    ours = all_anchors[list(head['mask'])]
    return tuple(backend.device_constant(table, reference)
                 for table in (all_anchors, position, ours))


def assign_targets(head, grid, bboxes, labels):
    """Targets of one head for a batch, vectorised over every box, on the boxes' device.

    No host synchronisation and shapes that depend on the batch's shapes only, so that a
    training step can be one CUDA graph.

    Args:
        head (dict): a CfgNetwork head (``anchors``, ``all_anchors``, ``mask``,
            ``n_class``), anchors in network-input pixels, with ``insize`` (H, W) added.
        grid (tuple of int): (h, w) of the head's map.
        bboxes (array): (B, R, 4) (x_min, y_min, x_max, y_max) as fractions of the network
            input, NumPy or CuPy; padding rows are zero boxes.
        labels (array): (B, R) int class ids, -1 on padding rows.

    Returns:
        dict of arrays of the boxes' module, all (B, h, w, A, ...): ``assigned`` bool,
        ``xy`` and ``wh`` (2,) float32 targets, ``scale`` (2 - w * h) float32, ``cls``
        (C,) one-hot float32. When two boxes fall on the same cell and anchor the later one
        gives xy, wh and scale, and ``cls`` holds both classes, as in Darknet.
    """
    xp = backend.get_array_module(bboxes)
    h, w = grid
    shape = (bboxes.shape[0], h, w, len(head['anchors']))
    n_slot = int(numpy.prod(shape))
    size, center = box_shapes(bboxes)
    all_anchors, position, ours = _anchor_tables(head, bboxes)
    anchor = position[shape_iou(xp, size, all_anchors).argmax(axis=-1)]  # (B, R), -1: not ours
    valid = (labels >= 0) & (anchor >= 0)
    row, column = grid_cell(xp, center, grid)
    slot = xp.where(valid, flat_slot(xp, row, column, anchor, shape), n_slot)
    index = write_index(slot, valid, n_slot)
    anchor_size = ours[xp.maximum(anchor, 0)]
    xy = xp.stack([center[..., 0] * w - column, center[..., 1] * h - row], axis=-1)
    wh = xp.log(xp.where(valid[..., None], size / anchor_size, 1))
    cls = xp.zeros((n_slot + 1, head['n_class']), numpy.float32)
    cls[slot, xp.maximum(labels, 0)] = 1  # every box of a cell sets its class
    targets = {'assigned': scatter(index, valid, n_slot, False, bool),
               'xy': scatter(index, xy, n_slot, 0, numpy.float32),
               'wh': scatter(index, wh, n_slot, 0, numpy.float32),
               'scale': scatter(index, 2 - size[..., 0] * size[..., 1], n_slot, 0,
                                numpy.float32),
               'cls': cls[:-1]}
    return {key: value.reshape(shape + value.shape[1:]) for key, value in targets.items()}


def best_truth_iou(xp, pred, bboxes):
    """(B, N) best IoU of each predicted box with the ground truths of its image.

    Args:
        xp: the array module of ``pred``.
        pred (array): (B, N, 4) boxes.
        bboxes (array): (B, R, 4) boxes of ``pred``'s module and units; padding rows are
            zero boxes, whose IoU with any box is 0.

    Returns:
        array: (B, N) of pred's dtype, 0 for an image without boxes.
    """
    if bboxes.shape[1] == 0:
        return xp.zeros(pred.shape[:2], pred.dtype)
    return box_iou(xp, pred, bboxes.astype(pred.dtype, copy=False)).max(axis=-1)


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
