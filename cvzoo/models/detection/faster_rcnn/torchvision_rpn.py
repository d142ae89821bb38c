"""torchvision's region proposal network of its Faster R-CNN FPN (``RegionProposalNetwork``
with ``RPNHead`` and the default ``AnchorGenerator`` of ``fasterrcnn_resnet50_fpn``).

Every level P2 ... P6 holds, per cell, three anchors of one size (32, 64, 128, 256, 512
from P2 to P6) at the ratios (h / w) 0.5, 1, 2, rounded to integers as torchvision does;
a level's stride is ``padded input size // map size`` per axis. The head is one shared
3x3 convolution + ReLU (``conv_depth`` of them in v2's ``RPNHead(conv_depth=2)``), then a
1x1 convolution with one objectness logit per anchor
(``conf``) and one with four offsets per anchor (``loc``, box coder weights (1, 1, 1, 1),
dw and dh clipped at log(1000 / 16)).
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import config, initializers
from cvzoo.models.detection import torchvision_anchors as anchor_layout
from cvzoo.models.detection.faster_rcnn import fpn_proposals

ANCHOR_SIZES = (32, 64, 128, 256, 512)
ANCHOR_RATIOS = (0.5, 1.0, 2.0)


def rpn_anchors(xp, img_size, grid_sizes, sizes=ANCHOR_SIZES, ratios=ANCHOR_RATIOS):
    """The anchors of every level for a padded input of ``img_size``.

    Args:
        xp: the array module of the result.
        img_size (pair of int): (H, W) of the padded input batch.
        grid_sizes (sequence of pairs of int): (H_l, W_l) of each level's map.
        sizes (sequence of int): the anchor size (side at ratio 1) of each level.
        ratios (sequence of float): height / width ratios.

    Returns:
        list of array: per level, (H_l * W_l * len(ratios), 4) float32; cells row-major,
        then the ratios.

    >>> rpn_anchors(numpy, (64, 64), [(1, 1)], (32,), (1.0,))
    [array([[-16., -16.,  16.,  16.]], dtype=float32)]
    """
    if len(grid_sizes) != len(sizes):
        raise ValueError(f'grid_sizes: expected {len(sizes)} levels, got {len(grid_sizes)}')
    result = []
    for (H, W), size in zip(grid_sizes, sizes):
        stride = (img_size[0] // H, img_size[1] // W)
        cell = anchor_layout.cell_anchors((size,), ratios)
        result.append(anchor_layout.level_anchors(xp, cell, (H, W), stride))
    return result


class TorchvisionRPN(L.Chain):
    """The RPN of torchvision's Faster R-CNN FPN; see the module docstring.

    Proposals of a batch, as torchvision's ``filter_proposals``: per image and level the
    ``n_pre_nms`` anchors of highest objectness are decoded, clipped to the image's own
    (resized, unpadded) size, boxes with a side below ``min_bbox_size`` dropped, NMS at
    ``nms_thresh`` within each level, and the ``n_post_nms`` best of the image kept
    (1000 and 1000 in test mode, 2000 and 2000 in training). The objectness of a
    proposal is ``sigmoid(conf)``.

    Args:
        in_channels (int): channels of the FPN's maps.
        anchor_sizes (sequence of int): one anchor size per level.
        ratios (sequence of float): anchor ratios (height / width).
        conv_depth (int): 3x3 convolutions + ReLU before the two 1x1 layers; 1 is one
            link ``conv``, more are the links ``conv/0``, ``conv/1``, ...
    """

    nms_thresh = 0.7
    min_bbox_size = 1e-3
    n_train_pre_nms, n_train_post_nms = 2000, 2000
    n_test_pre_nms, n_test_post_nms = 1000, 1000

    def __init__(self, in_channels=256, anchor_sizes=ANCHOR_SIZES, ratios=ANCHOR_RATIOS, *,
                 conv_depth=1):
        super().__init__()
        if not isinstance(conv_depth, int) or conv_depth < 1:
            raise ValueError(f'conv_depth: expected an int >= 1, got {conv_depth!r}')
        self.anchor_sizes, self.ratios = tuple(anchor_sizes), tuple(ratios)
        init = {'initialW': initializers.Normal(0.01), 'initial_bias': initializers.Zero()}
        n_anchor = len(self.ratios)
        convs = [L.Convolution2D(in_channels, in_channels, 3, 1, 1, **init)
                 for _ in range(conv_depth)]
        with self.init_scope():
            self.conv = convs[0] if conv_depth == 1 else L.ChainList(*convs)
            self.conf = L.Convolution2D(in_channels, n_anchor, 1, **init)
            self.loc = L.Convolution2D(in_channels, n_anchor * 4, 1, **init)

    def heads(self, hs):
        """FPN maps -> per level ``locs`` (B, K_l, 4) and ``confs`` (B, K_l) Variables,
        K_l = H_l * W_l * n_anchor in the anchors' order."""
        locs, confs = [], []
        convs = self.conv if isinstance(self.conv, L.ChainList) else (self.conv,)
        for h in hs:
            for conv in convs:
                h = F.relu(conv(h))
            B = h.shape[0]
            locs.append(F.reshape(F.transpose(self.loc(h), (0, 2, 3, 1)), (B, -1, 4)))
            confs.append(F.reshape(F.transpose(self.conf(h), (0, 2, 3, 1)), (B, -1)))
        return locs, confs

    def anchors(self, img_size, grid_sizes):
        """Per level, (K_l, 4) float32 anchors (see :func:`rpn_anchors`)."""
        return rpn_anchors(self.xp, img_size, grid_sizes, self.anchor_sizes, self.ratios)

    def forward(self, hs, img_size, sizes):
        """Offsets, objectness logits, proposals and anchors of a batch.

        Args:
            hs (list of Variable): the FPN's maps P2 ... P6.
            img_size (pair of int): (H, W) of the padded input.
            sizes (list of pairs of int): each image's (H, W) before padding.

        Returns:
            tuple: ``locs`` and ``confs`` (lists over levels), ``rois`` (R, 4) float32 and
            ``roi_indices`` (R,) int32 arrays (by image, then by decreasing objectness),
            ``anchors`` (list over levels).
        """
        locs, confs = self.heads(hs)
        level_anchors = self.anchors(img_size, [h.shape[2:] for h in hs])
        rois, roi_indices = self.propose(locs, confs, level_anchors, sizes)
        return locs, confs, rois, roi_indices, level_anchors

    def propose(self, locs, confs, level_anchors, sizes):
        """Proposals of a batch; see the class docstring.

        Returns:
            tuple: ``rois`` (R, 4) float32 and ``roi_indices`` (R,) int32, sorted by image
            and, within an image, by decreasing objectness.
        """
        if config.config.train:
            n_pre_nms, n_post_nms = self.n_train_pre_nms, self.n_train_post_nms
        else:
            n_pre_nms, n_post_nms = self.n_test_pre_nms, self.n_test_post_nms
        xp = self.xp
        limits = xp.asarray([[W, H, W, H] for H, W in sizes], numpy.float32)[:, None, :]
        bbox, logit, n_level = fpn_proposals.top_candidates(
            xp, locs, confs, level_anchors, n_pre_nms, limits)
        large = ((bbox[:, :, 2:] - bbox[:, :, :2]) >= self.min_bbox_size).all(axis=2)
        return fpn_proposals.fpn_proposals(
            bbox, F.sigmoid(logit).array, large, n_level, self.nms_thresh, n_post_nms)
