"""FasterRCNNTrainChain and FasterRCNNFPNTrainChain: a detector and its four losses.

Both compute, for a batch of prepared images of one size: the RPN's offset loss (smooth
L1) and objectness loss (cross entropy) on the anchors AnchorTargetCreator labels, and
the head's offset loss (smooth L1 on the fg RoIs, at their true class) and class loss
(softmax cross entropy) on the RoIs ProposalTargetCreator samples (Ren et al., NeurIPS
2015, eq. 1; Lin et al., CVPR 2017, section 5).
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend
from cvzoo.core.training import reporter
from cvzoo.models.detection import detector
from cvzoo.models.detection.faster_rcnn.anchor_target_creator import AnchorTargetCreator
from cvzoo.models.detection.faster_rcnn.proposal_target_creator import ProposalTargetCreator


def _loc_loss(pred_loc, gt_loc, weight, sigma):
    """sum_i weight_i * smooth_l1(pred_i - gt_i; beta = 1 / sigma^2) (Fast R-CNN eq. 3)."""
    loss = F.sum(F.smooth_l1_loss(pred_loc, gt_loc, beta=1.0 / sigma ** 2), axis=1)
    return F.sum(loss * weight)


def _class_loc(roi_cls_loc, label, n_class):
    """(S, n_class * 4) -> (S, 4) the rows' offsets at their class ``label``."""
    xp = roi_cls_loc.xp
    flat = F.reshape(roi_cls_loc, (-1, 4))
    return flat[xp.arange(len(label)) * n_class + label]


def _on_host(anchor, rois, roi_indices, bboxes, labels):
    """The arrays, and the per-image lists of arrays, read back to the host at once."""
    arrays = detector.to_host(anchor, rois, roi_indices, *bboxes, *labels)
    B = len(bboxes)
    return arrays[0], arrays[1], arrays[2], list(arrays[3:3 + B]), list(arrays[3 + B:])


def _as_batch(imgs, bboxes, labels, xp):
    """Boxes and labels as per-image arrays of ``xp``."""
    bboxes = [xp.asarray(bbox, numpy.float32).reshape(-1, 4) for bbox in bboxes]
    labels = [xp.asarray(label, numpy.int32).reshape(-1) for label in labels]
    if not len(imgs) == len(bboxes) == len(labels):
        raise ValueError(f'bboxes, labels: expected one entry per image ({len(imgs)}), got '
                         f'{len(bboxes)} and {len(labels)}')
    return bboxes, labels


class _TrainChainBase(L.Chain):
    def __init__(self, model):
        super().__init__()
        with self.init_scope():
            self.model = model

    def _head_samples(self, xp, rois, roi_indices, bboxes, labels):
        """Sample the RoIs of every image; concatenated samples, targets, image index."""
        model = self.model
        samples, locs, gt_labels, indices = [], [], [], []
        for i, (bbox, label) in enumerate(zip(bboxes, labels)):  # NOTE: per image, a handful
            roi, gt_loc, gt_label = self.proposal_target_creator(
                rois[roi_indices == i], bbox, label, model.loc_normalize_mean,
                model.loc_normalize_std)
            samples.append(roi)
            locs.append(gt_loc)
            gt_labels.append(gt_label)
            indices.append(xp.full(len(roi), i, dtype=numpy.int32))
        return (xp.concatenate(samples), xp.concatenate(locs), xp.concatenate(gt_labels),
                xp.concatenate(indices))

    def _report(self, losses):
        loss = sum(losses.values())
        reporter.report({'loss': loss, **{f'loss/{k}': v for k, v in losses.items()}}, self)
        return loss


class FasterRCNNTrainChain(_TrainChainBase):
    """The losses of a :class:`FasterRCNN` (e.g. FasterRCNNVGG16), as ChainerCV's.

    ``loss = rpn_loc + rpn_cls + roi_loc + roi_cls``; reported as ``loss`` and
    ``loss/rpn_loc``, ``loss/rpn_cls``, ``loss/roi_loc``, ``loss/roi_cls``. Offset losses
    are normalised by the labelled anchors or RoIs, of all images together.

    Args:
        faster_rcnn (FasterRCNN): the detector (``model/...`` parameters of this chain).
        rpn_sigma, roi_sigma (float): smooth L1 switches at 1 / sigma^2 (3 and 1).
        anchor_target_creator, proposal_target_creator: the samplers (defaults: the
            paper's 256 anchors, 128 RoIs with 25 % fg).

    Example, with a batch of prepared images ``x``::

        loss = FasterRCNNTrainChain(FasterRCNNVGG16(n_fg_class=20))(x, bboxes, labels)
    """

    def __init__(self, faster_rcnn, rpn_sigma=3.0, roi_sigma=1.0, *,
                 anchor_target_creator=None, proposal_target_creator=None):
        super().__init__(faster_rcnn)
        self.rpn_sigma, self.roi_sigma = rpn_sigma, roi_sigma
        self.anchor_target_creator = anchor_target_creator or AnchorTargetCreator()
        self.proposal_target_creator = proposal_target_creator or ProposalTargetCreator()

    def forward(self, imgs, bboxes, labels, scales=None):
        """Loss of a batch.

        Args:
            imgs (array): (B, 3, H, W) float32 prepared images (resized, mean subtracted).
            bboxes (list of array): per image (R_i, 4) float32 boxes in ``imgs``' pixels,
                x first, R_i >= 1, in the model's box convention (as
                ``ResizeFlipTransform`` gives them; the chain takes them as they are).
            labels (list of array): per image (R_i,) int32 labels in [0, n_fg_class).
            scales (sequence of float or None): per image, the resize factor (scales the
                ProposalCreator's ``min_size``).

        Returns:
            Variable: the 0-d loss.
        """
        model = self.model
        img_size = imgs.shape[2:]
        features = model.extractor(imgs)
        rpn_locs, rpn_scores, rois, roi_indices, anchor = model.rpn(features, img_size, scales)
        # NOTE: the targets are drawn on the host, as ChainerCV draws them, after one
        # transfer of what they need; they go back to the device once made.
        anchor, rois, roi_indices, bboxes, labels = _on_host(
            anchor, rois, roi_indices,
            *_as_batch(imgs, bboxes, labels, self.xp))
        targets = [self.anchor_target_creator(bbox, anchor, img_size) for bbox in bboxes]
        gt_rpn_loc = numpy.concatenate([loc for loc, _ in targets])
        gt_rpn_label = numpy.concatenate([label for _, label in targets])
        sample_roi, gt_roi_loc, gt_roi_label, sample_index = self._head_samples(
            numpy, rois, roi_indices, bboxes, labels)
        rpn_weight = (gt_rpn_label > 0).astype(numpy.float32) / max(
            int((gt_rpn_label >= 0).sum()), 1)
        roi_weight = (gt_roi_label > 0).astype(numpy.float32) / max(len(gt_roi_label), 1)
        (gt_rpn_loc, gt_rpn_label, sample_roi, gt_roi_loc, gt_roi_label, sample_index,
         rpn_weight, roi_weight) = (
            backend.to_device(array, self.device) for array in (
                gt_rpn_loc, gt_rpn_label, sample_roi, gt_roi_loc, gt_roi_label,
                sample_index, rpn_weight, roi_weight))
        roi_cls_loc, roi_score = model.head(features, sample_roi, sample_index)
        roi_loc = _class_loc(roi_cls_loc, gt_roi_label, model.head.n_class)
        return self._report({
            'rpn_loc': _loc_loss(F.reshape(rpn_locs, (-1, 4)), gt_rpn_loc, rpn_weight,
                                 self.rpn_sigma),
            'rpn_cls': F.softmax_cross_entropy(F.reshape(rpn_scores, (-1, 2)), gt_rpn_label),
            'roi_loc': _loc_loss(roi_loc, gt_roi_loc, roi_weight, self.roi_sigma),
            'roi_cls': F.softmax_cross_entropy(roi_score, gt_roi_label)})


class FasterRCNNFPNTrainChain(_TrainChainBase):
    """The losses of a :class:`FasterRCNNFPNResNet`, as ChainerCV's FPN training.

    RPN: per image 256 anchors (at most 25 % fg; fg IoU >= 0.7, bg < 0.3), smooth L1
    (beta 1/9) and sigmoid cross entropy, each divided by the image's labelled anchors.
    Head: per image 512 RoIs (at most 25 % fg at IoU >= 0.5), smooth L1 (beta 1) and
    softmax cross entropy, divided by the image's samples. Both averaged over images.
    Reported as ``loss``, ``loss/rpn_loc``, ``loss/rpn_conf``, ``loss/head_loc``,
    ``loss/head_conf``.

    Difference from ChainerCV: an anchor touching the image's far border counts as
    inside (ChainerCV: strictly inside), and bg anchors are drawn without replacement.

    Args:
        model (FasterRCNNFPNResNet): the detector.
        anchor_target_creator, proposal_target_creator: the samplers.
    """

    def __init__(self, model, *, anchor_target_creator=None, proposal_target_creator=None):
        super().__init__(model)
        self.anchor_target_creator = anchor_target_creator or \
            AnchorTargetCreator(256, 0.7, 0.3, 0.25)
        self.proposal_target_creator = proposal_target_creator or \
            ProposalTargetCreator(512, 0.25, 0.5, 0.5, 0.0)

    def forward(self, imgs, bboxes, labels, sizes=None):
        """Loss of a batch.

        Args:
            imgs (array): (B, 3, H, W) float32 prepared images, H and W multiples of 32.
            bboxes, labels: as :meth:`FasterRCNNTrainChain.forward`.
            sizes (list of (H, W) or None): each image's size before padding (default
                the batch's).

        Returns:
            Variable: the 0-d loss.
        """
        losses, _ = self.box_losses(imgs, bboxes, labels, sizes)
        return self._report(losses)

    def box_losses(self, imgs, bboxes, labels, sizes=None):
        """The four losses of a batch (arguments as :meth:`forward`), unreported, and what
        a further RoI branch needs (Mask R-CNN's mask head).

        Returns:
            tuple: the losses ``{name: Variable}`` and a dict of ``hs`` (the FPN's maps),
            and on the host: ``bboxes`` (per image, in the model's box convention),
            ``sample_roi`` (S, 4), ``sample_index`` (S,) and ``gt_roi_label`` (S,) (0
            background, else label + 1) of the head's samples.
        """
        model, xp = self.model, self.xp
        sizes = [imgs.shape[2:]] * len(imgs) if sizes is None else [tuple(s) for s in sizes]
        hs = model.extractor(imgs)
        locs, confs = model.rpn.heads(hs)
        level_anchors = model.rpn.anchors([h.shape[2:] for h in hs])
        rois, roi_indices = model.rpn.propose(locs, confs, level_anchors, imgs.shape[2:])
        # NOTE: the targets are drawn on the host, as ChainerCV draws them, after one
        # transfer of what they need; they go back to the device once made.
        anchor, rois, roi_indices, bboxes, labels = _on_host(
            xp.concatenate(level_anchors), rois, roi_indices,
            *_as_batch(imgs, bboxes, labels, xp))
        targets = [self.anchor_target_creator(bbox, anchor, size)
                   for bbox, size in zip(bboxes, sizes)]
        gt_rpn_loc = numpy.concatenate([loc for loc, _ in targets])
        gt_rpn_label = numpy.concatenate([label for _, label in targets])
        rpn_weight = numpy.concatenate([(label >= 0).astype(numpy.float32) / max(
            int((label >= 0).sum()), 1) for _, label in targets])
        sample_roi, gt_roi_loc, gt_roi_label, sample_index = self._head_samples(
            numpy, rois, roi_indices, bboxes, labels)
        samples = {'hs': hs, 'bboxes': bboxes, 'sample_roi': sample_roi,
                   'sample_index': sample_index, 'gt_roi_label': gt_roi_label}
        counts = numpy.bincount(sample_index, minlength=len(imgs)).astype(numpy.float32)
        head_weight = 1 / counts[sample_index]
        (gt_rpn_loc, gt_rpn_label, rpn_weight, rpn_loc_weight, sample_roi, gt_roi_loc,
         gt_roi_label, sample_index, head_weight, head_loc_weight) = (
            backend.to_device(array, self.device) for array in (
                gt_rpn_loc, gt_rpn_label, rpn_weight, rpn_weight * (gt_rpn_label > 0),
                sample_roi, gt_roi_loc, gt_roi_label, sample_index, head_weight,
                head_weight * (gt_roi_label > 0)))
        head_locs, head_confs = model.head(hs, sample_roi, sample_index)
        rpn_conf = F.sigmoid_cross_entropy(F.concat(confs, axis=1).reshape(-1),
                                           gt_rpn_label, reduce='no')
        head_conf = F.softmax_cross_entropy(head_confs, gt_roi_label, reduce='no')
        head_loc = _class_loc(head_locs, gt_roi_label, model.head.n_class)
        B = len(imgs)
        return {
            'rpn_loc': _loc_loss(F.reshape(F.concat(locs, axis=1), (-1, 4)), gt_rpn_loc,
                                 rpn_loc_weight, 3.0) / B,
            'rpn_conf': F.sum(rpn_conf * rpn_weight) / B,
            'head_loc': _loc_loss(head_loc, gt_roi_loc, head_loc_weight, 1.0) / B,
            'head_conf': F.sum(head_conf * head_weight) / B}, samples
