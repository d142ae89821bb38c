"""LevelRoIAlign: RoIAlign of each RoI from the FPN level of its size (Lin et al., eq. 1).

Shared by the RoI heads of FPN models: the box heads (ChainerCV's, torchvision's) and the
mask heads of Mask R-CNN.
"""

import numpy

import cvzoo.core.functions as F
from cvzoo.models.detection import detector


class LevelRoIAlign:
    """Mixin of a Link: ``pool(hs, rois, roi_indices)`` and ``distribute(rois)``.

    A RoI of side s = sqrt(w h) (input pixels) goes to level
    ``floor(log2(s / canonical_scale) + 1e-6) + canonical_level`` clipped to the levels
    but the last, and is pooled there by RoIAlign (``roi_size`` x ``roi_size`` bins,
    ``sampling_ratio`` x ``sampling_ratio`` samples per bin, no half-pixel shift).

    Attributes a subclass sets: ``scales`` (feature pixels per input pixel of each level),
    ``roi_size``; the others have ChainerCV's values.
    """

    canonical_level = 2
    canonical_scale = 224
    sampling_ratio = 2
    roi_size = 7

    def distribute(self, rois):
        """(R,) int32 level of each RoI (in input pixels)."""
        xp = self.xp
        size = xp.sqrt(xp.prod(rois[:, 2:] - rois[:, :2], axis=1))
        level = xp.floor(xp.log2(size / self.canonical_scale + 1e-6)).astype(numpy.int32)
        return xp.clip(level + self.canonical_level, 0, len(self.scales) - 2)

    def pool(self, hs, rois, roi_indices):
        """FPN maps and (R, 4) RoIs -> (R, C, roi_size, roi_size), in the RoIs' order.

        The RoIs are grouped by level with one stable sort; the group sizes and the
        range of ``roi_indices`` are read back in one transfer (one host sync on a GPU,
        not one per level).
        """
        xp = self.xp
        if len(rois) == 0:
            return xp.zeros((0, hs[0].shape[1], self.roi_size, self.roi_size),
                            numpy.float32)
        level = self.distribute(rois)
        order = xp.argsort(level, kind='stable')
        counts, bounds = detector.to_host(
            xp.bincount(level, minlength=len(self.scales) - 1),
            xp.stack((roi_indices.min(), roi_indices.max())))
        index_range = tuple(int(bound) for bound in bounds)
        stops = numpy.cumsum(counts).tolist()
        pooled = []
        for index, (start, stop) in enumerate(zip([0, *stops], stops)):
            if start == stop:
                continue
            members = order[start:stop]
            pooled.append(F.roi_align_2d(
                hs[index], rois[members], roi_indices[members], self.roi_size,
                self.scales[index], self.sampling_ratio, index_range=index_range))
        return F.concat(pooled, axis=0)[xp.argsort(order)]
