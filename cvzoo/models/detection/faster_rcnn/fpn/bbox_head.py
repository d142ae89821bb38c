"""FPN's RoI head: each RoI pooled (RoIAlign 7x7) from the level of its size, 2 fc layers."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.detection.faster_rcnn.fpn import level_roi_align


class FPNBboxHead(L.Chain, level_roi_align.LevelRoIAlign):
    """Per-class offsets and class scores of RoIs on an FPN (ChainerCV's ``BboxHead``).

    A RoI of side s = sqrt(w h) goes to level ``floor(log2(s / 224)) + 2`` clipped to the
    levels but the last (Lin et al., eq. 1), is pooled there by RoIAlign (7x7, 2x2
    samples per bin, no half-pixel shift) and goes through ``fc1``, ``fc2`` (``fc_size``,
    1024, ReLU), ``loc`` and ``conf``.

    Args:
        n_class (int): classes including the background.
        scales (tuple of float): feature pixels per input pixel of each level.
        in_channels (int): channels of the FPN's maps.
    """

    roi_size = 7
    fc_size = 1024

    def __init__(self, n_class, scales, in_channels=256):
        super().__init__()
        self.scales = tuple(scales)
        with self.init_scope():
            self.make_layers(in_channels)
        self.reset_classes(n_class)

    def make_layers(self, in_channels):
        """Build (within an init scope) the layers between the pooling and ``loc`` /
        ``conf``, which :meth:`box_features` applies: ``fc1`` and ``fc2``."""
        fc1_in = in_channels * self.roi_size ** 2
        fc_size = self.fc_size
        self.fc1 = L.Linear(fc1_in, fc_size, initialW=initializers.Uniform(fc1_in ** -0.5),
                            initial_bias=initializers.Uniform(fc1_in ** -0.5))
        self.fc2 = L.Linear(fc_size, fc_size, initialW=initializers.Uniform(fc_size ** -0.5),
                            initial_bias=initializers.Uniform(fc_size ** -0.5))

    def box_features(self, h):
        """(R, C, 7, 7) pooled RoIs -> (R, fc_size) features for ``loc`` and ``conf``."""
        h = F.reshape(h, (len(h), int(numpy.prod(h.shape[1:]))))
        return F.relu(self.fc2(F.relu(self.fc1(h))))

    def reset_classes(self, n_class):
        """(Re-)make ``loc`` (N(0, 0.001)) and ``conf`` (N(0, 0.01)) for n_class."""
        for name in ('loc', 'conf'):
            if hasattr(self, name):
                delattr(self, name)
        self.n_class = n_class
        with self.init_scope():
            self.loc = L.Linear(self.fc_size, n_class * 4, initialW=initializers.Normal(0.001))
            self.conf = L.Linear(self.fc_size, n_class, initialW=initializers.Normal(0.01))

    def forward(self, hs, rois, roi_indices):
        """FPN maps and (R, 4) RoIs -> (R, n_class * 4) offsets and (R, n_class) scores,
        in the RoIs' order (pooled by :meth:`LevelRoIAlign.pool`)."""
        h = self.box_features(self.pool(hs, rois, roi_indices))
        return self.loc(h), self.conf(h)
