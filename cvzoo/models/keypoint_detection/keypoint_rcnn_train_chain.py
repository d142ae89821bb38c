"""KeypointRCNNTrainChain: a Keypoint R-CNN and its five losses, as torchvision's
``RoIHeads`` trains it.

The RPN and box head losses are torchvision's Faster R-CNN FPN's
(:class:`~cvzoo.models.detection.faster_rcnn.torchvision_train_chain.
FasterRCNNResNet50FPNTrainChain`). The keypoint loss (He et al., ICCV 2017, section 5;
torchvision's ``keypointrcnn_loss``): each foreground RoI the box head sampled is matched
to the ground-truth box of its image it overlaps most; each keypoint of that instance
becomes one cell of the RoI's 56 x 56 heatmap (:func:`keypoint_targets`, torchvision's
``keypoints_to_heatmap``), and the loss is the softmax cross entropy over the 56 * 56
cells of each heatmap, averaged over the visible keypoints that fall inside their RoI.

The targets are made on the host from the points (kept there, as the masks of the Mask
R-CNN chains) and sent to the device once.
"""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.core.training import reporter
from cvzoo.models.detection.faster_rcnn import roi_branch, torchvision_train_chain


def keypoint_targets(point, visible, roi, size):
    """The heatmap cell of each keypoint in its RoI (torchvision's
    ``keypoints_to_heatmap``), on the host.

    A point (x, y) falls in cell ``floor((x - x_min) * size / (x_max - x_min))`` (and so
    for y), computed in float32 as torch does; a point on the RoI's right or bottom edge
    goes to the last cell.

    Args:
        point (numpy.ndarray): (R, K, 2) float (x, y) of each RoI's instance's keypoints.
        visible (numpy.ndarray): (R, K) bool.
        roi (numpy.ndarray): (R, 4) float (x_min, y_min, x_max, y_max).
        size (int): the heatmaps' side.

    Returns:
        numpy.ndarray: (R, K) int32 ``row * size + column``, -1 for keypoints that are not
        visible or fall outside their RoI.

    >>> point = numpy.array([[[2.0, 3.0], [8.0, 8.0], [9.0, 1.0]]])
    >>> keypoint_targets(point, numpy.array([[True, True, True]]),
    ...                  numpy.array([[0.0, 0.0, 8.0, 8.0]]), 4).tolist()
    [[5, 15, -1]]
    """
    f32 = numpy.float32
    point, roi = point.astype(f32), roi.astype(f32)
    start, end = roi[:, None, :2], roi[:, None, 2:]
    scale = f32(size) / (end - start)
    cell = numpy.floor((point - start) * scale).astype(numpy.int64)
    cell = numpy.where(point == end, size - 1, cell)
    valid = visible & ((cell >= 0) & (cell < size)).all(axis=-1)
    return numpy.where(valid, cell[..., 1] * size + cell[..., 0], -1).astype(numpy.int32)


class KeypointRCNNTrainChain(torchvision_train_chain.FasterRCNNResNet50FPNTrainChain):
    """The losses of a :class:`KeypointRCNNResNet50FPN`; see the module docstring.

    Reported as ``loss``, ``loss/rpn_loc``, ``loss/rpn_conf``, ``loss/head_loc``,
    ``loss/head_conf`` and ``loss/keypoint``. Arguments as
    FasterRCNNResNet50FPNTrainChain.

    For example::

        loss = KeypointRCNNTrainChain(model)(x, bboxes, labels, points, visibles, sizes)
    """

    def forward(self, imgs, bboxes, labels, points, visibles, sizes=None):
        """Loss of a batch.

        Args:
            imgs (array): (B, 3, H, W) float32 prepared images (``model.prepare`` each,
                ``model.pad_batch``), on the model's device.
            bboxes (list of array): per image (R_i, 4) float32 boxes in ``imgs``' pixels.
            labels (list of array): per image (R_i,) int32 labels in [0, n_fg_class).
            points (list of array): per image (R_i, K, 2) float32 (x, y) keypoints in
                ``imgs``' pixels.
            visibles (list of array): per image (R_i, K) bool, the keypoints labelled.
            sizes (list of (H, W) or None): each image's size before padding.

        Returns:
            Variable: the 0-d loss.

        Raises:
            ValueError: points or visibles that do not fit their boxes (named).
        """
        point, visible = _gathered_points(points, visibles, bboxes, self.model.n_point)
        losses, samples = self.box_losses(imgs, bboxes, labels, sizes)
        losses['keypoint'] = self.keypoint_loss(samples, point, visible)
        loss = sum(losses.values())
        reporter.report({'loss': loss, **{f'loss/{k}': v for k, v in losses.items()}}, self)
        return loss

    def keypoint_loss(self, samples, point, visible):
        """The keypoint loss of the box head's foreground samples (module docstring).

        Args:
            samples (dict): :meth:`box_losses`' second result.
            point (numpy.ndarray): (G, K, 2) keypoints of all images' instances in order.
            visible (numpy.ndarray): (G, K) bool.

        Returns:
            Variable: the 0-d loss.
        """
        model, xp = self.model, self.xp
        roi, roi_index, _ = roi_branch.foreground_samples(samples)
        if len(roi) == 0:
            # NOTE: as torchvision, a loss of 0 that keeps the head in the graph
            heatmap = model.keypoint_head(samples['hs'],
                                          xp.asarray([[0, 0, 1, 1]], numpy.float32),
                                          xp.zeros(1, numpy.int32))
            return 0 * F.sum(heatmap)
        gt_index = roi_branch.best_ground_truth(roi, roi_index, samples['bboxes'])
        size = model.keypoint_head.heatmap_size
        target = keypoint_targets(point[gt_index], visible[gt_index], roi, size)
        roi, roi_index, target = (backend.to_device(array, self.device)
                                  for array in (roi, roi_index, target.ravel()))
        heatmap = model.keypoint_head(samples['hs'], roi, roi_index)
        return F.softmax_cross_entropy(F.reshape(heatmap, (len(target), size * size)), target)


def _gathered_points(points, visibles, bboxes, n_point):
    """All images' keypoints as one (G, K, 2) float32 and one (G, K) bool host array."""
    if not len(points) == len(visibles) == len(bboxes):
        raise ValueError(f'points, visibles: expected one entry per image ({len(bboxes)}), '
                         f'got {len(points)} and {len(visibles)}')
    point, visible = [], []
    for i, bbox in enumerate(bboxes):  # NOTE: per image, a handful
        point.append(numpy.asarray(backend.to_numpy(points[i]), numpy.float32))
        visible.append(numpy.asarray(backend.to_numpy(visibles[i]), bool))
        if point[-1].shape != (len(bbox), n_point, 2):
            raise ValueError(f'points[{i}]: expected ({len(bbox)}, {n_point}, 2) (one row '
                             f'per box), got shape {point[-1].shape}')
        if visible[-1].shape != (len(bbox), n_point):
            raise ValueError(f'visibles[{i}]: expected ({len(bbox)}, {n_point}), got shape '
                             f'{visible[-1].shape}')
    return numpy.concatenate(point), numpy.concatenate(visible)
