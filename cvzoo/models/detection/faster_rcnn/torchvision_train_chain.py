"""FasterRCNNResNet50FPNTrainChain: the four losses of torchvision's Faster R-CNN FPN.

As torchvision's ``RegionProposalNetwork`` and ``RoIHeads`` in training mode:

- RPN: every anchor (also those crossing the border) is matched to its best box by
  IoU: >= 0.7 foreground, < 0.3 background, in between ignored, plus each box's best
  anchors (torchvision's ``Matcher`` with low-quality matches); per image 256 anchors
  are drawn, at most half foreground. Box loss: smooth L1 (beta 1/9) of the foreground
  offsets (weights (1, 1, 1, 1)), summed and divided by the number of drawn anchors of
  the batch; objectness loss: sigmoid cross entropy averaged over the drawn anchors.
- Head: the proposals (2000 per image in training) and the ground-truth boxes are
  matched: IoU >= 0.5 takes the box's label, below is background; per image 512 RoIs
  are drawn, at most a quarter foreground. Class loss: softmax cross entropy averaged
  over the drawn RoIs; box loss: smooth L1 (beta 1/9) of the foreground RoIs' offsets at
  their class (weights (10, 10, 5, 5)), summed and divided by the number of drawn RoIs.
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend
from cvzoo.core.training import reporter
from cvzoo.models.detection import anchor_matching, box_coding, detector
from cvzoo.models.detection.faster_rcnn import anchor_target_creator, torchvision_fpn


def _balanced_sample(xp, label, n_sample, pos_fraction):
    """Keep a random ``n_sample`` of the labelled entries (1 fg, 0 bg), at most
    ``int(n_sample * pos_fraction)`` fg; the rest become -1 (in place)."""
    anchor_target_creator.subsample(xp, label, 1, int(n_sample * pos_fraction))
    anchor_target_creator.subsample(xp, label, 0, n_sample - int((label == 1).sum()))
    return label


class FasterRCNNResNet50FPNTrainChain(L.Chain):
    """A :class:`FasterRCNNResNet50FPN` and its losses; see the module docstring.

    ``loss = rpn_loc + rpn_conf + head_loc + head_conf``, reported as ``loss`` and
    ``loss/<part>``.

    Args:
        model (FasterRCNNResNet50FPN): the detector (``model/...`` parameters).
        rpn_n_sample, rpn_pos_fraction, rpn_fg_thresh, rpn_bg_thresh: the RPN's sampling.
        roi_n_sample, roi_pos_fraction, roi_fg_thresh: the head's sampling.
        beta (float): the smooth L1 switch point of both box losses.

    Example, with a batch of prepared images ``x``::

        loss = FasterRCNNResNet50FPNTrainChain(FasterRCNNResNet50FPN(n_fg_class=20))(
            x, bboxes, labels, sizes)
    """

    def __init__(self, model, *, rpn_n_sample=256, rpn_pos_fraction=0.5, rpn_fg_thresh=0.7,
                 rpn_bg_thresh=0.3, roi_n_sample=512, roi_pos_fraction=0.25,
                 roi_fg_thresh=0.5, beta=1 / 9):
        super().__init__()
        with self.init_scope():
            self.model = model
        self.rpn_n_sample, self.rpn_pos_fraction = rpn_n_sample, rpn_pos_fraction
        self.rpn_fg_thresh, self.rpn_bg_thresh = rpn_fg_thresh, rpn_bg_thresh
        self.roi_n_sample, self.roi_pos_fraction = roi_n_sample, roi_pos_fraction
        self.roi_fg_thresh, self.beta = roi_fg_thresh, beta

    def forward(self, imgs, bboxes, labels, sizes=None):
        """Loss of a batch.

        Args:
            imgs (array): (B, 3, H, W) float32 prepared images (``model.prepare`` each,
                ``model.pad_batch``), on the model's device.
            bboxes (list of array): per image (R_i, 4) float32 boxes in ``imgs``' pixels;
                R_i may be 0; in the model's box convention (as
                ``ResizeFlipTransform`` gives them; the chain takes them as they are).
            labels (list of array): per image (R_i,) int32 labels in [0, n_fg_class).
            sizes (list of pairs of int or None): each image's (H, W) before padding.

        Returns:
            Variable: the 0-d loss.
        """
        losses, _ = self.box_losses(imgs, bboxes, labels, sizes)
        loss = sum(losses.values())
        reporter.report({'loss': loss, **{f'loss/{k}': v for k, v in losses.items()}}, self)
        return loss

    def box_losses(self, imgs, bboxes, labels, sizes=None):
        """The four losses of a batch (arguments as :meth:`forward`), unreported, and what
        a further RoI branch needs (Mask R-CNN's mask head).

        Returns:
            tuple: the losses ``{name: Variable}`` and a dict of ``hs`` (the FPN's maps),
            and on the host: ``bboxes`` (per image, in the model's box convention),
            ``sample_roi`` (S, 4), ``sample_index`` (S,) and ``gt_roi_label`` (S,) (0
            background, else label + 1) of the head's samples.
        """
        if not len(imgs) == len(bboxes) == len(labels):
            raise ValueError(f'bboxes, labels: expected one entry per image ({len(imgs)}), '
                             f'got {len(bboxes)} and {len(labels)}')
        xp, model = self.xp, self.model
        bboxes = [xp.asarray(bbox, numpy.float32).reshape(-1, 4) for bbox in bboxes]
        labels = [xp.asarray(label, numpy.int32).reshape(-1) for label in labels]
        sizes = [tuple(imgs.shape[2:])] * len(imgs) if sizes is None else sizes
        hs = model.features(imgs)
        locs, confs = model.rpn.heads(hs)
        level_anchors = model.rpn.anchors(imgs.shape[2:], [h.shape[2:] for h in hs])
        rois, roi_indices = model.rpn.propose(locs, confs, level_anchors, sizes)
        # NOTE: the targets are drawn on the host after one transfer of what they need
        # (their sizes depend on the data); they go back to the device once made.
        B = len(imgs)
        arrays = detector.to_host(xp.concatenate(level_anchors), rois, roi_indices,
                                  *bboxes, *labels)
        anchor, rois, roi_indices = arrays[:3]
        bboxes, labels = arrays[3:3 + B], arrays[3 + B:]
        *rpn_targets, n_sampled = self._rpn_targets(anchor, bboxes)
        head_targets = self._head_samples(rois, roi_indices, bboxes, labels)
        samples = {'hs': hs, 'bboxes': bboxes, 'sample_roi': head_targets[0],
                   'sample_index': head_targets[1], 'gt_roi_label': head_targets[2]}
        rpn_fg, rpn_gt_loc, rpn_gt_label, sample_roi, sample_index, gt_label, head_fg, \
            head_gt_loc = (backend.to_device(array, self.device) for array in (
                *rpn_targets, *head_targets))
        rpn_loc, rpn_conf = self._rpn_losses(F.concat(locs, axis=1), F.concat(confs, axis=1),
                                             rpn_fg, rpn_gt_loc, rpn_gt_label, n_sampled)
        head_locs, head_confs = model.head(hs, sample_roi, sample_index)
        class_loc = F.reshape(head_locs, (-1, 4))[head_fg]
        head_loc = F.sum(F.smooth_l1_loss(class_loc, head_gt_loc, beta=self.beta)) / max(
            len(gt_label), 1)
        losses = {'rpn_loc': rpn_loc, 'rpn_conf': rpn_conf, 'head_loc': head_loc,
                  'head_conf': F.softmax_cross_entropy(head_confs, gt_label)}
        return losses, samples

    def _rpn_targets(self, anchor, bboxes):
        """The RPN's targets of every image, on the host: ``fg`` (F,) indices of the
        foreground anchors into the (B * K) anchors, ``gt_loc`` (F, 4) float32 their
        offsets, ``gt_label`` (B * K,) int32 (1, 0, -1 not drawn) and the number of drawn
        anchors (at least 1)."""
        gt_label, gt_loc = [], []
        for bbox in bboxes:  # NOTE: per image, a handful
            match = anchor_matching.match_anchors(anchor, bbox, self.rpn_fg_thresh,
                                                  self.rpn_bg_thresh)
            label = numpy.where(match >= 0, 1, numpy.where(
                match == anchor_matching.BACKGROUND, 0, -1)).astype(numpy.int32)
            gt_label.append(_balanced_sample(numpy, label, self.rpn_n_sample,
                                             self.rpn_pos_fraction))
            target = bbox[numpy.maximum(match, 0)] if len(bbox) else anchor
            gt_loc.append(box_coding.encode(anchor, target).astype(numpy.float32))
        gt_label, gt_loc = numpy.concatenate(gt_label), numpy.concatenate(gt_loc)
        fg = numpy.nonzero(gt_label == 1)[0]
        return fg, gt_loc[fg], gt_label, max(int((gt_label >= 0).sum()), 1)

    def _rpn_losses(self, loc, conf, fg, gt_loc, gt_label, n_sampled):
        """The RPN's box and objectness losses over the anchors drawn in every image."""
        loc = F.reshape(loc, (-1, 4))[fg]
        loc_loss = F.sum(F.smooth_l1_loss(loc, gt_loc, beta=self.beta)) / n_sampled
        conf_loss = F.sigmoid_cross_entropy(F.reshape(conf, (-1,)), gt_label, reduce='no')
        return loc_loss, F.sum(conf_loss) / n_sampled

    def _head_samples(self, rois, roi_indices, bboxes, labels):
        """Drawn RoIs (proposals and ground truth) of every image with their targets, on
        the host: ``roi`` (S, 4), ``roi_index`` (S,), ``gt_label`` (S,) int32 (0
        background, label + 1 otherwise), ``fg`` (F,) indices of the foreground RoIs'
        offsets at their class into the head's (S * n_class) offsets and ``gt_loc``
        (F, 4) float32 their targets (weights (10, 10, 5, 5))."""
        parts = []
        for i, (bbox, label) in enumerate(zip(bboxes, labels)):  # NOTE: per image
            roi = numpy.concatenate((rois[roi_indices == i], bbox))
            match = anchor_matching.match_anchors(roi, bbox, self.roi_fg_thresh,
                                                  self.roi_fg_thresh, False)
            gt_label = numpy.where(match >= 0, label[numpy.maximum(match, 0)] + 1 if len(bbox)
                                   else 0, 0).astype(numpy.int32)
            drawn = numpy.minimum(gt_label, 1)
            _balanced_sample(numpy, drawn, self.roi_n_sample, self.roi_pos_fraction)
            keep = numpy.nonzero(drawn >= 0)[0]
            target = bbox[numpy.maximum(match[keep], 0)] if len(bbox) else roi[keep]
            gt_loc = box_coding.encode(roi[keep], target, torchvision_fpn.BOX_CODER_WEIGHTS)
            parts.append((roi[keep], numpy.full(len(keep), i, numpy.int32), gt_label[keep],
                          gt_loc.astype(numpy.float32)))
        roi, roi_index, gt_label, gt_loc = (numpy.concatenate(part) for part in zip(*parts))
        fg = numpy.nonzero(gt_label > 0)[0]
        return (roi, roi_index, gt_label, fg * self.model.head.n_class + gt_label[fg],
                gt_loc[fg])
