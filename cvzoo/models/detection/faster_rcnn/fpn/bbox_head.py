"""FPN's RoI head: each RoI pooled (RoIAlign 7x7) from the level of its size, 2 fc layers."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.detection import detector


class FPNBboxHead(L.Chain):
    """Per-class offsets and class scores of RoIs on an FPN (ChainerCV's ``BboxHead``).

    A RoI of side s = sqrt(w h) goes to level ``floor(log2(s / 224)) + 2`` clipped to the
    levels but the last (Lin et al., eq. 1), is pooled there by RoIAlign (7x7, 2x2
    samples per bin, no half-pixel shift) and goes through ``fc1``, ``fc2`` (1024, ReLU),
    ``loc`` and ``conf``.

    Args:
        n_class (int): classes including the background.
        scales (tuple of float): feature pixels per input pixel of each level.
        in_channels (int): channels of the FPN's maps.
    """

    canonical_level = 2
    canonical_scale = 224
    roi_size = 7
    sampling_ratio = 2

    def __init__(self, n_class, scales, in_channels=256):
        super().__init__()
        self.scales = tuple(scales)
        fc1_in = in_channels * self.roi_size ** 2
        with self.init_scope():
            self.fc1 = L.Linear(fc1_in, 1024, initialW=initializers.Uniform(fc1_in ** -0.5),
                                initial_bias=initializers.Uniform(fc1_in ** -0.5))
            self.fc2 = L.Linear(1024, 1024, initialW=initializers.Uniform(1024 ** -0.5),
                                initial_bias=initializers.Uniform(1024 ** -0.5))
        self.reset_classes(n_class)

    def reset_classes(self, n_class):
        """(Re-)make ``loc`` (N(0, 0.001)) and ``conf`` (N(0, 0.01)) for n_class."""
        for name in ('loc', 'conf'):
            if hasattr(self, name):
                delattr(self, name)
        self.n_class = n_class
        with self.init_scope():
            self.loc = L.Linear(1024, n_class * 4, initialW=initializers.Normal(0.001))
            self.conf = L.Linear(1024, n_class, initialW=initializers.Normal(0.01))

    def distribute(self, rois):
        """(R,) int32 level of each RoI (in input pixels)."""
        xp = self.xp
        size = xp.sqrt(xp.prod(rois[:, 2:] - rois[:, :2], axis=1))
        level = xp.floor(xp.log2(size / self.canonical_scale + 1e-6)).astype(numpy.int32)
        return xp.clip(level + self.canonical_level, 0, len(self.scales) - 2)

    def forward(self, hs, rois, roi_indices):
        """FPN maps and (R, 4) RoIs -> (R, n_class * 4) offsets and (R, n_class) scores,
        in the RoIs' order.

        The RoIs are grouped by level with one stable sort; the group sizes and the
        range of ``roi_indices`` are read back in one transfer (one host sync on a GPU,
        not one per level).
        """
        xp = self.xp
        if len(rois) == 0:
            h = xp.zeros((0, self.fc1.W.shape[1]), numpy.float32)
        else:
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
            h = F.concat(pooled, axis=0)[xp.argsort(order)]
            h = F.reshape(h, (len(rois), -1))
        h = F.relu(self.fc2(F.relu(self.fc1(h))))
        return self.loc(h), self.conf(h)
