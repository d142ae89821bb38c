"""torchvision's box head of Faster R-CNN FPN: ``MultiScaleRoIAlign`` over P2 ... P5,
``TwoMLPHead`` (1024) and ``FastRCNNPredictor``."""

import numpy

from cvzoo.models.detection.faster_rcnn.fpn import bbox_head, level_roi_align


class TorchvisionLevelMapper(level_roi_align.LevelRoIAlign):
    """torchvision's ``LevelMapper`` for the RoI heads of its FPN models (box and mask).

    A RoI of area a (in input pixels) is pooled from level
    ``floor(4 + log2(sqrt(a) / 224) + 1e-6)`` clipped to 2 ... 5 (P2 ... P5 at 1/4 ...
    1/32), computed in float32 as torch does, so RoIs on a level boundary go where
    torchvision's go.
    """

    canonical_level = 4
    min_level, max_level = 2, 5
    eps = 1e-6

    def distribute(self, rois):
        """(R,) int32 index (0 for P2) of the level each RoI (input pixels) is pooled from."""
        xp = self.xp
        rois = rois.astype(numpy.float32, copy=False)
        size = xp.sqrt((rois[:, 2] - rois[:, 0]) * (rois[:, 3] - rois[:, 1]))
        level = xp.floor(numpy.float32(self.canonical_level)
                         + xp.log2(size / numpy.float32(self.canonical_scale))
                         + numpy.float32(self.eps))
        level = xp.clip(level, self.min_level, self.max_level)
        return (level - self.min_level).astype(numpy.int32)


class TorchvisionBoxHead(TorchvisionLevelMapper, bbox_head.FPNBboxHead):
    """Per-class offsets and class scores of RoIs, as torchvision's ``RoIHeads`` computes
    them before its post-processing.

    A RoI is pooled from the level :class:`TorchvisionLevelMapper` gives it, by RoIAlign
    7x7 with 2x2 samples per bin and no half-pixel shift (``aligned=False``); then
    ``fc1``, ``fc2`` (1024, ReLU; its ``fc6``, ``fc7``), ``loc`` (``bbox_pred``) and
    ``conf`` (``cls_score``).

    torchvision infers each level's scale from the map and image sizes (the power of two
    nearest their ratio); with inputs padded to multiples of 32 that is always
    1/4 ... 1/32, which this head uses.

    Args:
        n_class (int): classes including the background.
        scales (tuple of float): feature pixels per input pixel of the FPN's levels
            (P2 ... P6; the last is not pooled from).
        in_channels (int): channels of the FPN's maps.
    """
