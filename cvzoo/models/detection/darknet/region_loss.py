"""The YOLOv2 loss of one ``[region]`` head: target assignment and the four terms.

Redmon and Farhadi, YOLO9000, CVPR 2017, with pjreddie's Darknet region_layer.c
(``bias_match=1``, ``rescore=1``, ``softmax=1`` as in yolov2-voc.cfg and
yolov2-tiny-voc.cfg). Each ground-truth box goes to the cell holding its centre and,
there, to the anchor whose shape fits it best (IoU of boxes sharing a centre, anchors in
grid cells). Darknet writes a delta ``scale * (target - output)`` per entry; the terms
below are the losses whose gradients are those deltas (squared errors halved, and for
the classes the softmax cross entropy, whose gradient w.r.t. the logits is Darknet's
``onehot - softmax``). Summed over the batch and divided by the batch size:

- xy: ``coord_scale * (2 - w * h) / 2 * (sigmoid(t_xy) - target_xy)^2`` on assigned
  anchors, target_xy the centre's offset inside its cell, w, h as fractions of the input;
- wh: ``coord_scale * (2 - w * h) / 2 * (t_wh - log(gt_wh / anchor_wh))^2``;
- obj: ``object_scale / 2 * (sigmoid(t_o) - IoU)^2`` on assigned anchors, IoU that of
  the decoded box with its ground truth (a constant target: "rescore"), and
  ``noobject_scale / 2 * sigmoid(t_o)^2`` on the others whose decoded box overlaps no
  ground truth by more than ``thresh``;
- cls: ``class_scale * softmax cross entropy`` on assigned anchors.

Not reproduced: Darknet's "prior" term of the first 12800 images, which pulls every
prediction towards its anchor at the cell centre (scale 0.01), and the ``softmax_tree``
(YOLO9000) and ``background`` variants.
"""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.models.detection.darknet import yolo_decoder, yolo_loss

# yolov2-voc.cfg's [region] values; a head dict may override them
REGION_DEFAULTS = {'object_scale': 5.0, 'noobject_scale': 1.0, 'class_scale': 1.0,
                   'coord_scale': 1.0, 'thresh': 0.6}


def assign_region_targets(head, grid, bboxes, labels):
    """Targets of one region head for a batch, vectorised over every box, on the boxes'
    device (no host synchronisation, shapes set by the batch's shapes: a training step
    can be one CUDA graph).

    Args:
        head (dict): a CfgNetwork region head (``anchors`` (A, 2) in grid cells).
        grid (tuple of int): (h, w) of the head's map.
        bboxes (array): (B, R, 4) (x_min, y_min, x_max, y_max) as fractions of the network
            input, NumPy or CuPy; padding rows are zero boxes.
        labels (array): (B, R) int class ids, -1 on padding rows.

    Returns:
        dict of arrays of the boxes' module, all (B, h, w, A, ...): ``assigned`` bool,
        ``xy`` and ``wh`` (2,) float32 targets, ``scale`` (2 - w * h) float32, ``bbox``
        (4,) the assigned ground truth (float32), ``label`` int32 (-1 where not assigned).
        When two boxes fall on the same cell and anchor, the later one wins, as in Darknet.
    """
    xp = backend.get_array_module(bboxes)
    h, w = grid
    shape = (bboxes.shape[0], h, w, len(head['anchors']))
    n_slot = int(numpy.prod(shape))
    size, center = yolo_loss.box_shapes(bboxes)
    anchors = backend.device_constant(
        numpy.asarray(head['anchors'], numpy.float64) / [w, h], bboxes)  # input fractions
    anchor = yolo_loss.shape_iou(xp, size, anchors).argmax(axis=-1)
    valid = labels >= 0
    row, column = yolo_loss.grid_cell(xp, center, grid)
    slot = xp.where(valid, yolo_loss.flat_slot(xp, row, column, anchor, shape), n_slot)
    index = yolo_loss.write_index(slot, valid, n_slot)
    xy = xp.stack([center[..., 0] * w - column, center[..., 1] * h - row], axis=-1)
    wh = xp.log(xp.where(valid[..., None], size / anchors[anchor], 1))
    targets = {'assigned': yolo_loss.scatter(index, valid, n_slot, False, bool),
               'xy': yolo_loss.scatter(index, xy, n_slot, 0, numpy.float32),
               'wh': yolo_loss.scatter(index, wh, n_slot, 0, numpy.float32),
               'scale': yolo_loss.scatter(index, 2 - size[..., 0] * size[..., 1], n_slot, 0,
                                          numpy.float32),
               'bbox': yolo_loss.scatter(index, bboxes.astype(numpy.float64), n_slot, 0,
                                         numpy.float32),
               'label': yolo_loss.scatter(index, labels, n_slot, -1, numpy.int32)}
    return {key: value.reshape(shape + value.shape[1:]) for key, value in targets.items()}


def region_head_loss(raw, head, bboxes, labels):
    """The four YOLOv2 loss terms of one region head (see the module docstring).

    Args:
        raw (Variable): (B, A * (5 + C), h, w) raw head map.
        head (dict): the CfgNetwork head, with ``insize`` (H, W) added; ``thresh`` and
            the ``*_scale`` weights of :data:`REGION_DEFAULTS` may be given too.
        bboxes, labels: as :func:`assign_region_targets`.

    Returns:
        tuple of 4 Variables: 0-d xy, wh, obj and cls losses.
    """
    options = dict(REGION_DEFAULTS, **{k: head[k] for k in REGION_DEFAULTS if k in head})
    xp = backend.get_array_module(raw.array)
    B, _, h, w = raw.shape
    n_anchor, n_class = len(head['anchors']), head['n_class']
    t = F.transpose(F.reshape(raw, (B, n_anchor, 5 + n_class, h, w)), (0, 3, 4, 1, 2))
    targets = assign_region_targets(head, (h, w), bboxes, labels)
    assigned = xp.asarray(targets['assigned'])
    coord = targets['scale'] * targets['assigned'] * (options['coord_scale'] / 2)
    coord = xp.asarray(coord, raw.dtype)[..., None]
    xy = F.sum((F.sigmoid(t[..., 0:2]) - xp.asarray(targets['xy'], raw.dtype)) ** 2 * coord)
    wh = F.sum((t[..., 2:4] - xp.asarray(targets['wh'], raw.dtype)) ** 2 * coord)

    pred, _ = yolo_decoder.decode_yolo_head(raw.array, head, head['insize'])
    pred = pred.reshape(B, h, w, n_anchor, 4)
    truth = xp.asarray(targets['bbox'], raw.dtype)
    rescore = yolo_loss.box_iou(xp, pred[..., None, :], truth[..., None, :])[..., 0, 0]
    overlaps = yolo_loss.best_truth_iou(xp, pred.reshape(B, -1, 4), bboxes)
    background = (overlaps.reshape(B, h, w, n_anchor) <= options['thresh']) & ~assigned
    obj_target = xp.where(assigned, rescore, 0).astype(raw.dtype)
    obj_weight = (assigned * options['object_scale']
                  + background * options['noobject_scale']).astype(raw.dtype) / 2
    obj = F.sum((F.sigmoid(t[..., 4]) - obj_target) ** 2 * obj_weight)

    cls_label = xp.asarray(targets['label']).reshape(-1)
    cls = F.softmax_cross_entropy(F.reshape(t[..., 5:], (-1, n_class)), cls_label,
                                  reduce='no')
    cls = F.sum(cls) * options['class_scale']
    return xy / B, wh / B, obj / B, cls / B
