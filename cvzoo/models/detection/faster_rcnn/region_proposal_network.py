"""RegionProposalNetwork: Faster R-CNN's RPN (Ren et al., NeurIPS 2015, section 3.1)."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.detection.faster_rcnn import anchors, proposal_creator


class RegionProposalNetwork(L.Chain):
    """A 3x3 convolution, then per cell and anchor 2 scores (bg, fg) and 4 offsets.

    Layer names follow ChainerCV: ``conv1``, ``score`` (A * 2 channels, (bg, fg) per
    anchor) and ``loc`` (A * 4 channels, cvzoo's (dx, dy, dw, dh) per anchor).

    Args:
        in_channels (int): channels of the feature map.
        mid_channels (int): channels of ``conv1``.
        ratios (sequence of float): anchor height / width ratios.
        anchor_scales (sequence of float): anchor sides in units of ``feat_stride``.
        feat_stride (int): input pixels per feature-map cell.
        initialW: initializer of the three convolutions (default N(0, 0.01)).
        proposal_creator_params (dict or None): arguments of :class:`ProposalCreator`.
    """

    def __init__(self, in_channels=512, mid_channels=512, ratios=(0.5, 1, 2),
                 anchor_scales=(8, 16, 32), feat_stride=16, *, initialW=None,
                 proposal_creator_params=None):
        super().__init__()
        self.anchor_base = anchors.generate_anchor_base(feat_stride, ratios, anchor_scales)
        self.feat_stride = feat_stride
        self.proposal_layer = proposal_creator.ProposalCreator(
            **(proposal_creator_params or {}))
        n_anchor = len(self.anchor_base)
        init = {'initialW': initialW or initializers.Normal(0.01)}
        with self.init_scope():
            self.conv1 = L.Convolution2D(in_channels, mid_channels, 3, 1, 1, **init)
            self.score = L.Convolution2D(mid_channels, n_anchor * 2, 1, 1, 0, **init)
            self.loc = L.Convolution2D(mid_channels, n_anchor * 4, 1, 1, 0, **init)

    def forward(self, x, img_size, scales=None):
        """Offsets, scores, RoIs and anchors of a batch.

        Args:
            x (Variable): (B, C, H, W) feature map.
            img_size (tuple of int): (H, W) of the input images (the batch's size).
            scales (sequence of float or None): per image, input pixels per original
                pixel (scales ProposalCreator's ``min_size``); None means 1.

        Returns:
            tuple: ``rpn_locs`` (B, H W A, 4) and ``rpn_scores`` (B, H W A, 2) Variables;
            ``rois`` (R, 4) float32 and ``roi_indices`` (R,) int32 arrays; ``anchor``
            (H W A, 4) float32.
        """
        B, _, H, W = x.shape
        xp = self.xp
        anchor = anchors.enumerate_shifted_anchor(
            xp.asarray(self.anchor_base), self.feat_stride, H, W)
        h = F.relu(self.conv1(x))
        rpn_locs = F.reshape(F.transpose(self.loc(h), (0, 2, 3, 1)), (B, -1, 4))
        rpn_scores = F.reshape(F.transpose(self.score(h), (0, 2, 3, 1)), (B, -1, 2))
        # NOTE: ChainerCV (whose weights these are) orders the anchors by the raw fg logit,
        # not by the softmax's fg probability (py-faster-rcnn's); the two orders differ.
        fg_score = rpn_scores.array[:, :, 1]
        scales = [1.0] * B if scales is None else scales
        rois, roi_indices = [], []
        for i in range(B):  # NOTE: one NMS per image; batches are small
            roi = self.proposal_layer(rpn_locs.array[i], fg_score[i], anchor, img_size,
                                      scale=scales[i])
            rois.append(roi)
            roi_indices.append(xp.full(len(roi), i, dtype=numpy.int32))
        rois = xp.concatenate(rois, axis=0).astype(numpy.float32, copy=False)
        return rpn_locs, rpn_scores, rois, xp.concatenate(roi_indices), anchor
