"""MaskRCNNTrainChain and TorchvisionMaskRCNNTrainChain: a Mask R-CNN FPN and its five
losses, as ChainerCV's FPN training and as torchvision's ``RoIHeads`` train.

The RPN and box head losses are Faster R-CNN FPN's
(:class:`~cvzoo.models.detection.faster_rcnn.train_chain.FasterRCNNFPNTrainChain`). The
mask loss (He et al., ICCV 2017, section 3): each foreground RoI the box head sampled is
matched to the ground-truth box of its image it overlaps most; that instance's mask, cut
to the RoI and resized to 28 x 28 (:func:`~.mask_targets.mask_targets`), is the target
of the RoI's own class channel of the mask head; the loss is the mean sigmoid cross
entropy over all its cells (ChainerCV's ``mask_head_loss_post``), added to the others
without dividing by the batch size.

torchvision's mask loss (``maskrcnn_loss``) differs in its targets: each foreground
RoI's matched mask is pooled by RoIAlign (28 x 28, adaptive sampling, no half-pixel
shift) into soft targets in [0, 1], and the loss is the mean binary cross entropy with
those.

The targets are cut on the host from the masks (kept there, as ChainerCV keeps them) and
sent to the device once.
"""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.core.training import reporter
from cvzoo.models.detection.faster_rcnn import roi_branch, torchvision_train_chain, train_chain
from cvzoo.models.instance_segmentation.mask_rcnn import mask_targets


class MaskRCNNTrainChain(train_chain.FasterRCNNFPNTrainChain):
    """The losses of a :class:`MaskRCNNFPNResNet`; see the module docstring.

    Reported as ``loss``, ``loss/rpn_loc``, ``loss/rpn_conf``, ``loss/head_loc``,
    ``loss/head_conf`` and ``loss/mask``.

    Args:
        model (MaskRCNNFPNResNet): the model.
        anchor_target_creator, proposal_target_creator: the samplers (as
            FasterRCNNFPNTrainChain).

    For example::

        loss = MaskRCNNTrainChain(model)(x, bboxes, labels, masks, sizes)
    """

    def forward(self, imgs, bboxes, labels, masks, sizes=None):
        """Loss of a batch.

        Args:
            imgs (array): (B, 3, H, W) float32 prepared images, H and W multiples of 32.
            bboxes (list of array): per image (R_i, 4) float32 boxes in ``imgs``' pixels,
                x first, R_i >= 1.
            labels (list of array): per image (R_i,) int32 labels in [0, n_fg_class).
            masks (list of array): per image (R_i, H_i, W_i) bool masks in ``imgs``'
                pixels (H_i <= H, W_i <= W: the image before padding), on the host.
            sizes (list of (H, W) or None): each image's size before padding.

        Returns:
            Variable: the 0-d loss.

        Raises:
            ValueError: masks that do not fit their boxes or the batch (named).
        """
        masks = _padded_masks(masks, bboxes, imgs.shape[2:])
        losses, samples = self.box_losses(imgs, bboxes, labels, sizes)
        losses['mask'] = self.mask_loss(samples, masks)
        return self._report(losses)

    def mask_loss(self, samples, masks):
        """The mask loss of the box head's samples (see the module docstring).

        Args:
            samples (dict): :meth:`box_losses`' second result.
            masks (numpy.ndarray): (G, H, W) bool masks of all images' ground truth in
                order, padded to the batch's size.

        Returns:
            Variable: the 0-d loss.
        """
        return _mask_loss(self, samples, masks, _hard_targets, F.sigmoid_cross_entropy)


class TorchvisionMaskRCNNTrainChain(torchvision_train_chain.FasterRCNNResNet50FPNTrainChain):
    """The losses of a :class:`MaskRCNNResNet50FPN`, as torchvision's: its Faster R-CNN
    losses and the mask loss of the module docstring (soft RoIAlign targets).

    Reported as ``loss``, ``loss/rpn_loc``, ``loss/rpn_conf``, ``loss/head_loc``,
    ``loss/head_conf`` and ``loss/mask``. Arguments as FasterRCNNResNet50FPNTrainChain.
    """

    def forward(self, imgs, bboxes, labels, masks, sizes=None):
        """Loss of a batch; arguments as :meth:`MaskRCNNTrainChain.forward`.

        Returns:
            Variable: the 0-d loss.
        """
        masks = _padded_masks(masks, bboxes, imgs.shape[2:])
        losses, samples = self.box_losses(imgs, bboxes, labels, sizes)
        losses['mask'] = self.mask_loss(samples, masks)
        loss = sum(losses.values())
        reporter.report({'loss': loss, **{f'loss/{k}': v for k, v in losses.items()}}, self)
        return loss

    def mask_loss(self, samples, masks):
        """torchvision's mask loss of the box head's samples (see the module docstring).

        Args:
            samples (dict): :meth:`box_losses`' second result.
            masks (numpy.ndarray): (G, H, W) bool masks of all images' ground truth in
                order, padded to the batch's size.

        Returns:
            Variable: the 0-d loss.
        """
        return _mask_loss(self, samples, masks, _soft_targets,
                          lambda logit, target: F.mean(soft_sigmoid_cross_entropy(logit, target)))


def _mask_loss(chain, samples, masks, make_targets, loss):
    """The mask loss of the box head's foreground samples (see the module docstring).

    ``make_targets(masks, roi, gt_index, size)`` cuts each RoI's targets from its matched
    ground-truth mask on the host; ``loss(logit, target)`` compares them with the mask
    head's channel of the RoI's class.
    """
    model, xp = chain.model, chain.xp
    roi, roi_index, channel = roi_branch.foreground_samples(samples)
    if len(roi) == 0:
        # NOTE: as ChainerCV, a dummy RoI keeps the mask head in the graph
        segm = model.mask_head(samples['hs'], xp.asarray([[0, 0, 1, 1]], numpy.float32),
                               xp.zeros(1, numpy.int32))
        return 0 * F.sum(segm)
    gt_index = roi_branch.best_ground_truth(roi, roi_index, samples['bboxes'])
    target = make_targets(masks, roi, gt_index, model.mask_head.segm_size)
    roi, roi_index, channel, target = (backend.to_device(array, chain.device)
                                       for array in (roi, roi_index, channel, target))
    segm = model.mask_head(samples['hs'], roi, roi_index)
    return loss(segm[xp.arange(len(channel)), channel], target)


def _hard_targets(masks, roi, gt_index, size):
    """ChainerCV's: the matched mask cut to the RoI, resized, thresholded (int32)."""
    return mask_targets.mask_targets(masks, roi, gt_index, size).astype(numpy.int32)


def _soft_targets(masks, roi, gt_index, size):
    """torchvision's: the matched mask pooled by RoIAlign into values in [0, 1]."""
    return F.roi_align_2d(masks[:, None].astype(numpy.float32), roi,
                          gt_index.astype(numpy.int32), size, 1.0, None).array[:, 0]


def soft_sigmoid_cross_entropy(x, t):
    """Elementwise ``-t log(s) - (1 - t) log(1 - s)``, ``s = sigmoid(x)``, for targets t in
    [0, 1] (PyTorch's ``binary_cross_entropy_with_logits``), composed from the stable
    integer-target :func:`F.sigmoid_cross_entropy` of t = 1 and t = 0.

    >>> import numpy
    >>> x = numpy.array([0.0, 2.0], numpy.float32)
    >>> soft_sigmoid_cross_entropy(x, numpy.array([0.5, 1.0], numpy.float32)).array.round(4)
    array([0.6931, 0.1269], dtype=float32)
    """
    xp = backend.get_array_module(x)
    ones = xp.ones(x.shape, numpy.int32)
    return F.sigmoid_cross_entropy(x, ones, reduce='no') * t + \
        F.sigmoid_cross_entropy(x, ones * 0, reduce='no') * (1 - t)


def _padded_masks(masks, bboxes, size):
    """All images' masks in one (G, H, W) bool host array, zero-padded to ``size``."""
    if len(masks) != len(bboxes):
        raise ValueError(f'masks: expected one entry per image ({len(bboxes)}), got '
                         f'{len(masks)}')
    H, W = size
    padded = []
    for i, (mask, bbox) in enumerate(zip(masks, bboxes)):  # NOTE: per image, a handful
        mask = backend.to_numpy(mask)
        if mask.ndim != 3 or len(mask) != len(bbox) or mask.shape[1] > H or \
                mask.shape[2] > W:
            raise ValueError(f'masks[{i}]: expected ({len(bbox)}, <= {H}, <= {W}) (one mask '
                             f'per box, within the batch), got shape {mask.shape}')
        canvas = numpy.zeros((len(mask), H, W), bool)
        canvas[:, :mask.shape[1], :mask.shape[2]] = mask
        padded.append(canvas)
    return numpy.concatenate(padded)
