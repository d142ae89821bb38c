"""FPN's region proposal network: one head shared by all levels, 3 anchors per cell."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import config, initializers
from cvzoo.models.detection.faster_rcnn import anchors, fpn_proposals


class FPNRegionProposalNetwork(L.Chain):
    """RPN over the levels of an FPN (ChainerCV's ``RPN``, names ``conv``, ``loc``, ``conf``).

    Each level l holds anchors of side ``anchor_size * 2 ** l`` (32) at ratios 0.5, 1, 2; ``conv``
    (3x3, ``channels``: 256, ReLU) is shared by the levels, then ``conf`` gives one objectness
    logit per anchor (sigmoid) and ``loc`` four offsets. Proposals: per image and level the
    ``n_pre_nms`` best anchors are decoded (dw, dh clipped at log(1000 / 16)), clipped to the
    input, empty ones dropped and suppressed at IoU 0.7 keeping ``n_post_nms``; the ``n_post_nms``
    best over the levels are the RoIs.

    Args:
        scales (tuple of float): feature pixels per input pixel of each level.
        in_channels (int): channels of the FPN's maps.
    """

    anchor_size = 32
    channels = 256
    anchor_ratios = (0.5, 1, 2)
    nms_thresh = 0.7
    n_train_pre_nms, n_train_post_nms = 2000, 2000
    n_test_pre_nms, n_test_post_nms = 1000, 1000

    def __init__(self, scales, in_channels=256):
        super().__init__()
        self.scales = tuple(scales)
        init = {'initialW': initializers.Normal(0.01)}
        n_anchor = len(self.anchor_ratios)
        with self.init_scope():
            self.conv = L.Convolution2D(in_channels, self.channels, 3, 1, 1, **init)
            self.loc = L.Convolution2D(self.channels, n_anchor * 4, 1, **init)
            self.conf = L.Convolution2D(self.channels, n_anchor, 1, **init)

    def heads(self, hs):
        """Per level: ``locs`` (B, K_l, 4) and ``confs`` (B, K_l) Variables."""
        locs, confs = [], []
        for h in hs:
            h = F.relu(self.conv(h))
            B = h.shape[0]
            locs.append(F.reshape(F.transpose(self.loc(h), (0, 2, 3, 1)), (B, -1, 4)))
            confs.append(F.reshape(F.transpose(self.conf(h), (0, 2, 3, 1)), (B, -1)))
        return locs, confs

    def anchors(self, sizes):
        """Per level, (K_l, 4) float32 anchors for maps of the given (H_l, W_l)."""
        return [anchors.fpn_level_anchors(self.xp, size, self.scales[level],
                                          self.anchor_size * 2 ** level, self.anchor_ratios)
                for level, size in enumerate(sizes)]

    def forward(self, hs, img_size, scales=None):
        """Offsets, objectness, RoIs and anchors of a batch.

        Args:
            hs (list of Variable): the FPN's maps.
            img_size (tuple of int): (H, W) of the (padded) input.
            scales: unused (the FPN keeps every non-empty box).

        Returns:
            tuple: ``locs`` and ``confs`` (lists over levels), ``rois`` (R, 4) float32
            and ``roi_indices`` (R,) int32 arrays, ``anchors`` (list over levels).
        """
        locs, confs = self.heads(hs)
        level_anchors = self.anchors([h.shape[2:] for h in hs])
        rois, roi_indices = self.propose(locs, confs, level_anchors, img_size)
        return locs, confs, rois, roi_indices, level_anchors

    def propose(self, locs, confs, level_anchors, img_size):
        """RoIs of a batch; see the class docstring.

        The candidates of every image and level are chosen and decoded on the device,
        then suppressed on the host after one transfer (:func:`fpn_proposals`).
        """
        if config.config.train:
            n_pre_nms, n_post_nms = self.n_train_pre_nms, self.n_train_post_nms
        else:
            n_pre_nms, n_post_nms = self.n_test_pre_nms, self.n_test_post_nms
        xp = self.xp
        H, W = img_size
        limits = xp.asarray([W, H, W, H], numpy.float32)
        bbox, score, n_level = fpn_proposals.top_candidates(
            xp, locs, confs, level_anchors, n_pre_nms, limits)
        nonempty = (bbox[:, :, 2:] > bbox[:, :, :2]).all(axis=2)
        return fpn_proposals.fpn_proposals(
            bbox, score, nonempty, n_level, self.nms_thresh, n_post_nms,
            n_level_post_nms=n_post_nms)
