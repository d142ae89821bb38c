"""RetinaNetTrainChain: RetinaNet's losses (Lin et al., ICCV 2017, sections 3.2 and 4.1).

As torchvision's RetinaNet: anchors are matched to boxes (IoU >= 0.5 foreground,
< 0.4 background, in between ignored, plus the best anchors of each box); the
classification loss is the focal loss (alpha 0.25, gamma 2) summed over the classes of
all non-ignored anchors, the box loss the L1 distance of the foreground anchors' offsets
to their boxes' encodings (or smooth L1 with ``smooth_l1_beta``); each is divided by
the image's number of foreground anchors (at least 1) and averaged over the images.
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend
from cvzoo.core.training import reporter
from cvzoo.models.detection import anchor_matching, box_coding, detector
from cvzoo.models.detection.retinanet import focal_loss


class RetinaNetTrainChain(L.Chain):
    """A RetinaNet and its loss; ``loss = loc + conf``, reported as ``loss``,
    ``loss/loc`` and ``loss/conf``.

    Args:
        model (RetinaNetResNet50FPN): the detector (``model/...`` parameters).
        alpha, gamma (float): the focal loss's weight of positives and exponent.
        fg_thresh, bg_thresh (float): the anchor matching thresholds.
        smooth_l1_beta (float or None): None for torchvision's L1 box loss, else the
            smooth L1 switch point (Detectron uses 0.11).

    Example, with a batch of prepared images ``x``::

        loss = RetinaNetTrainChain(RetinaNetResNet50FPN(n_fg_class=20))(x, bboxes, labels)
    """

    def __init__(self, model, alpha=0.25, gamma=2.0, *, fg_thresh=0.5, bg_thresh=0.4,
                 smooth_l1_beta=None):
        super().__init__()
        with self.init_scope():
            self.model = model
        self.alpha, self.gamma = alpha, gamma
        self.fg_thresh, self.bg_thresh = fg_thresh, bg_thresh
        self.smooth_l1_beta = smooth_l1_beta

    def forward(self, imgs, bboxes, labels):
        """Loss of a batch.

        Args:
            imgs (array): (B, 3, H, W) float32 prepared images (``model.prepare`` each,
                ``model.pad_batch``), on the model's device.
            bboxes (list of array): per image (R_i, 4) float32 boxes in ``imgs``' pixels
                (x_min, y_min, x_max, y_max); R_i may be 0; in the model's box
                convention (as ``ResizeFlipTransform`` gives them; the chain takes them as
                they are).
            labels (list of array): per image (R_i,) int32 labels in [0, n_fg_class).

        Returns:
            Variable: the 0-d loss.
        """
        if not len(imgs) == len(bboxes) == len(labels):
            raise ValueError(f'bboxes, labels: expected one entry per image ({len(imgs)}), '
                             f'got {len(bboxes)} and {len(labels)}')
        xp = self.xp
        locs, confs, level_anchors = self.model(imgs)
        loc, conf = F.concat(locs, axis=1), F.concat(confs, axis=1)
        anchor = xp.concatenate(level_anchors)
        gt_label, fg_index, gt_loc, weight = self.targets(anchor, bboxes, labels,
                                                          conf.shape[2])
        conf_loss = focal_loss.sigmoid_focal_loss(conf, gt_label, self.alpha, self.gamma,
                                                  reduce='no')
        conf_loss = F.sum(F.sum(conf_loss, axis=(1, 2)) * weight)
        pred_loc = F.reshape(loc, (-1, 4))[fg_index]
        if self.smooth_l1_beta is None:
            distance = F.absolute(pred_loc - gt_loc)
        else:
            distance = F.smooth_l1_loss(pred_loc, gt_loc, beta=self.smooth_l1_beta)
        loc_loss = F.sum(distance * weight[fg_index // len(anchor)][:, None])
        loss = loc_loss + conf_loss
        reporter.report({'loss': loss, 'loss/loc': loc_loss, 'loss/conf': conf_loss}, self)
        return loss

    def targets(self, anchor, bboxes, labels, n_fg_class):
        """Targets of a batch on the device.

        The anchors are matched on the host, after one transfer of the anchors and
        boxes (the sizes of what they give depend on the data); the targets go back to
        the device once made. The boxes are taken as they are, in the model's box
        convention.

        Returns:
            tuple: ``gt_label`` (B, K, n_fg_class) int32 (1, 0, -1 ignored), ``fg_index``
            (F,) indices of the foreground anchors into the (B * K) flattened anchors,
            ``gt_loc`` (F, 4) float32 their target offsets, ``weight`` (B,) float32,
            1 / (B * max(1, foreground anchors of the image)).
        """
        xp = self.xp
        B = len(bboxes)
        bboxes = [xp.asarray(bbox, numpy.float32).reshape(-1, 4) for bbox in bboxes]
        labels = [xp.asarray(label, numpy.int32).reshape(-1) for label in labels]
        arrays = detector.to_host(anchor, *bboxes, *labels)
        anchor, bboxes, labels = arrays[0], arrays[1:1 + B], arrays[1 + B:]
        K = len(anchor)
        # per anchor: its box's label, or BACKGROUND, or IGNORED
        anchor_label = numpy.empty((B, K), numpy.int32)
        fg_index, gt_loc, n_fg = [], [], []
        for i, (bbox, label) in enumerate(zip(bboxes, labels)):  # NOTE: per image, a few
            match = anchor_matching.match_anchors(anchor, bbox, self.fg_thresh,
                                                  self.bg_thresh)
            fg = numpy.nonzero(match >= 0)[0]
            anchor_label[i] = match
            anchor_label[i, fg] = label[match[fg]]
            fg_index.append(fg + i * K)
            gt_loc.append(box_coding.encode(anchor[fg], bbox[match[fg]]))
            n_fg.append(max(len(fg), 1))
        weight = 1 / (B * numpy.asarray(n_fg, numpy.float32))
        anchor_label, fg_index, gt_loc, weight = (
            backend.to_device(array, self.device)
            for array in (anchor_label[:, :, None], numpy.concatenate(fg_index),
                          numpy.concatenate(gt_loc).astype(numpy.float32),
                          weight.astype(numpy.float32)))
        gt_label = (anchor_label == xp.arange(n_fg_class, dtype=numpy.int32)).astype(
            numpy.int32)
        gt_label = xp.where(anchor_label == anchor_matching.IGNORED, focal_loss.IGNORE_LABEL,
                            gt_label).astype(numpy.int32)
        return gt_label, fg_index, gt_loc, weight
