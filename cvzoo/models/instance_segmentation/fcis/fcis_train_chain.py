"""FCISTrainChain: an FCIS model and its five losses, as ChainerCV's FCIS training.

For one image (ChainerCV trains FCIS one image at a time): the RPN's offset loss
(smooth L1, sigma 3) and objectness loss (softmax cross entropy) on the anchors
AnchorTargetCreator labels; on the RoIs ProposalTargetCreator samples (128, at most 25 %
fg at IoU >= 0.5, bg in [0.1, 0.5)): the class-agnostic offset loss (smooth L1, sigma 1,
the foreground offsets of the fg RoIs), the class loss (softmax cross entropy) and the
mask loss: the inside/outside scores of each fg RoI's true class against its ground-truth
mask cut to the rounded RoI and resized to the grid (OpenCV's bilinear rule, ``>= 0.4``),
softmax cross entropy summed over the cells, divided by the samples and times
``10 / M ** 2``. The head runs one pass (no ``iter2``) with the true classes' scores.

The targets are drawn on the host (as ChainerCV draws them) and sent to the device once.
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend
from cvzoo.core.training import reporter
from cvzoo.models.detection import detector
from cvzoo.models.detection.faster_rcnn import train_chain
from cvzoo.models.detection.faster_rcnn.anchor_target_creator import AnchorTargetCreator
from cvzoo.models.detection.faster_rcnn.proposal_target_creator import ProposalTargetCreator
from cvzoo.models.instance_segmentation import mask_paste
from cvzoo.utils import bbox as bbox_utils


def mask_targets(gt_masks, rois, index, mask_size, binary_thresh=0.4):
    """(R, M, M) int32 targets in {0, 1}: each mask cut to its rounded RoI and resized.

    Args:
        gt_masks (numpy.ndarray): (G, H, W) bool masks of one image.
        rois (numpy.ndarray): (R, 4) float boxes (x_min, y_min, x_max, y_max) inside it.
        index (numpy.ndarray): (R,) int, the mask of each RoI.
        mask_size (int): M.
        binary_thresh (float): a cell is 1 where the resized mask is ``>=`` this.

    >>> gt = numpy.zeros((1, 6, 6), bool)
    >>> gt[0, :3] = True
    >>> mask_targets(gt, numpy.array([[0, 0, 6, 6]], numpy.float32), numpy.zeros(1, int), 2)
    array([[[1, 1],
            [0, 0]]], dtype=int32)
    """
    _, H, W = gt_masks.shape
    corner = numpy.round(rois.astype(numpy.float32)).astype(numpy.int64)
    masks = gt_masks.astype(numpy.float32)
    cells = numpy.arange(mask_size)[None, :]
    y_low, y_high, y_frac = mask_paste.bilinear_taps(
        numpy, cells, mask_size, numpy.maximum(corner[:, 3:4] - corner[:, 1:2], 1))
    x_low, x_high, x_frac = mask_paste.bilinear_taps(
        numpy, cells, mask_size, numpy.maximum(corner[:, 2:3] - corner[:, 0:1], 1))
    y_low, y_high = (numpy.clip(y + corner[:, 1:2], 0, H - 1) for y in (y_low, y_high))
    x_low, x_high = (numpy.clip(x + corner[:, 0:1], 0, W - 1) for x in (x_low, x_high))
    index = index[:, None]
    rows = ((1 - y_frac)[:, :, None] * masks[index, y_low]
            + y_frac[:, :, None] * masks[index, y_high])                      # (R, M, W)
    picked = numpy.arange(len(rois))[:, None, None], numpy.arange(mask_size)[None, :, None]
    cut = ((1 - x_frac)[:, None, :] * rows[picked + (x_low[:, None, :],)]
           + x_frac[:, None, :] * rows[picked + (x_high[:, None, :],)])       # (R, M, M)
    return (cut >= binary_thresh).astype(numpy.int32)


class FCISTrainChain(L.Chain):
    """The losses of an :class:`~cvzoo.models.instance_segmentation.fcis.fcis.FCIS`.

    Reported as ``loss``, ``loss/rpn_loc``, ``loss/rpn_cls``, ``loss/roi_loc``,
    ``loss/roi_cls`` and ``loss/roi_mask``.

    Args:
        fcis (FCIS): the model (``model/...`` parameters of this chain).
        rpn_sigma, roi_sigma (float): smooth L1 switches at 1 / sigma^2 (3 and 1).
        anchor_target_creator, proposal_target_creator: the samplers.
        binary_thresh (float): of the mask targets.

    For example::

        loss = FCISTrainChain(model)(x, [bbox], [label], [mask], [scale])
    """

    def __init__(self, fcis, rpn_sigma=3.0, roi_sigma=1.0, *, anchor_target_creator=None,
                 proposal_target_creator=None, binary_thresh=0.4):
        super().__init__()
        with self.init_scope():
            self.model = fcis
        self.rpn_sigma, self.roi_sigma = rpn_sigma, roi_sigma
        self.anchor_target_creator = anchor_target_creator or AnchorTargetCreator()
        self.proposal_target_creator = proposal_target_creator or \
            ProposalTargetCreator(128, 0.25, 0.5, 0.5, 0.1)
        self.binary_thresh = binary_thresh

    def forward(self, imgs, bboxes, labels, masks, scales=None):
        """Loss of a one-image batch, or the mean loss of a list of images.

        A list of (3, H, W) images (each at its own size, as ``convert.field_lists``
        gives them) runs one image at a time; the losses are averaged over the images
        (as ChainerCV's multi-GPU training averages one image per GPU).

        Args:
            imgs (array or list of array): (1, 3, H, W) float32 prepared image, or a list
                of (3, H, W) ones (with one entry per image in the other arguments).
            bboxes (list of array): one (R, 4) float32 array of boxes in ``imgs``' pixels,
                x first, R >= 1.
            labels (list of array): one (R,) int32 array of labels in [0, n_fg_class).
            masks (list of array): one (R, H, W) bool array of masks, on the host.
            scales (list of float or None): the resize factor (scales the proposals'
                ``min_size``).

        Returns:
            Variable: the 0-d loss.

        Raises:
            ValueError: an array of more than one image, a list of images with another
                number of boxes, labels, masks or scales, or masks not (R, H, W).
        """
        if not isinstance(imgs, (list, tuple)):
            return self._report(self.image_losses(imgs, bboxes, labels, masks, scales))
        scales = [None] * len(imgs) if scales is None else scales
        if not len(imgs) == len(bboxes) == len(labels) == len(masks) == len(scales):
            raise ValueError(f'bboxes, labels, masks, scales: expected one entry per image '
                             f'({len(imgs)}), got {len(bboxes)}, {len(labels)}, '
                             f'{len(masks)} and {len(scales)}')
        per_image = [self.image_losses(img[None], [bbox], [label], [mask],
                                       None if scale is None else [scale])
                     for img, bbox, label, mask, scale in zip(imgs, bboxes, labels, masks,
                                                              scales)]
        return self._report({name: sum(losses[name] for losses in per_image) / len(per_image)
                             for name in per_image[0]})

    def image_losses(self, imgs, bboxes, labels, masks, scales=None):
        """The losses ``{name: Variable}`` of a one-image batch (arguments as
        :meth:`forward`'s for one image), unreported."""
        model = self.model
        if len(imgs) != 1 or not len(bboxes) == len(labels) == len(masks) == 1:
            raise ValueError(f'imgs, bboxes, labels, masks: FCIS trains one image at a time, '
                             f'got {len(imgs)} images and {len(bboxes)}, {len(labels)}, '
                             f'{len(masks)} entries')
        img_size = imgs.shape[2:]
        mask = numpy.asarray(masks[0], bool)
        if mask.shape != (len(bboxes[0]),) + tuple(img_size):
            raise ValueError(f'masks: expected ({len(bboxes[0])}, {img_size[0]}, '
                             f'{img_size[1]}) (one per box, at the image size), got '
                             f'{mask.shape}')
        rpn_features, roi_features = model.extractor(imgs)
        rpn_locs, rpn_scores, rois, _, anchor = model.rpn(rpn_features, img_size, scales)
        anchor, rois, bbox, label = detector.to_host(
            anchor, rois, backend.on_device_of(bboxes[0], rois, numpy.float32),
            backend.on_device_of(labels[0], rois, numpy.int32))
        gt_rpn_loc, gt_rpn_label = self.anchor_target_creator(bbox, anchor, img_size)
        sample_roi, gt_roi_loc, gt_roi_label = self.proposal_target_creator(
            rois, bbox, label, model.head.loc_normalize_mean, model.head.loc_normalize_std)
        gt_roi_mask = self._mask_targets(sample_roi, gt_roi_label, bbox, mask)
        rpn_weight = (gt_rpn_label > 0).astype(numpy.float32) / max(
            int((gt_rpn_label >= 0).sum()), 1)
        roi_weight = (gt_roi_label > 0).astype(numpy.float32) / max(len(gt_roi_label), 1)
        (gt_rpn_loc, gt_rpn_label, sample_roi, gt_roi_loc, gt_roi_label, gt_roi_mask,
         rpn_weight, roi_weight) = (backend.to_device(array, model.device) for array in (
             gt_rpn_loc, gt_rpn_label, sample_roi, gt_roi_loc, gt_roi_label, gt_roi_mask,
             rpn_weight, roi_weight))
        sample_index = model.xp.zeros(len(sample_roi), numpy.int32)
        seg_scores, locs, cls_scores, _, _ = model.head(
            roi_features, sample_roi, sample_index, img_size, gt_roi_label)
        fg_loc = F.get_item(locs, (model.xp.arange(len(sample_roi)),
                                   (gt_roi_label > 0).astype(numpy.int32)))
        size = model.head.roi_size
        return {
            'rpn_loc': train_chain._loc_loss(F.reshape(rpn_locs, (-1, 4)), gt_rpn_loc,
                                             rpn_weight, self.rpn_sigma),
            'rpn_cls': F.softmax_cross_entropy(F.reshape(rpn_scores, (-1, 2)), gt_rpn_label),
            'roi_loc': train_chain._loc_loss(fg_loc, gt_roi_loc, roi_weight, self.roi_sigma),
            'roi_cls': F.softmax_cross_entropy(cls_scores, gt_roi_label),
            'roi_mask': F.softmax_cross_entropy(seg_scores, gt_roi_mask, normalize=False)
            * (10.0 / size / size)}

    def _mask_targets(self, sample_roi, gt_roi_label, bbox, mask):
        """(S, M, M) int32 targets: fg RoIs' cut masks, -1 (ignored) for bg RoIs."""
        size = self.model.head.roi_size
        targets = numpy.full((len(sample_roi), size, size), -1, numpy.int32)
        fg = gt_roi_label > 0
        if fg.any():
            owner = bbox_utils.bbox_iou(sample_roi[fg], bbox).argmax(axis=1)
            targets[fg] = mask_targets(mask, sample_roi[fg], owner, size, self.binary_thresh)
        return targets

    def _report(self, losses):
        loss = sum(losses.values())
        reporter.report({'loss': loss, **{f'loss/{k}': v for k, v in losses.items()}}, self)
        return loss
