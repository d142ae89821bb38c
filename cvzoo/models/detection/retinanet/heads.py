"""RetinaNet's classification and box-regression subnets (Lin et al., ICCV 2017, 3.3)."""

import math

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers

PRIOR_PROBABILITY = 0.01
N_TOWER = 4


def _tower(in_channels):
    init = {'initialW': initializers.Normal(0.01), 'initial_bias': initializers.Zero()}
    return L.ChainList(*[L.Convolution2D(in_channels, in_channels, 3, 1, 1, **init)
                         for _ in range(N_TOWER)])


def _flatten(y, n_out):
    """(B, A * n_out, H, W) -> (B, H * W * A, n_out): cells row-major, then anchors."""
    B, _, H, W = y.shape
    y = F.reshape(y, (B, -1, n_out, H, W))
    return F.reshape(F.transpose(y, (0, 3, 4, 1, 2)), (B, -1, n_out))


class RetinaNetHead(L.Chain):
    """The two subnets shared by all levels: four 3x3 convolutions + ReLU each, then
    ``conf`` (A * n_fg_class logits) and ``loc`` (A * 4 offsets) 3x3 convolutions.

    Initialisation as the paper and torchvision: N(0, 0.01) kernels, zero biases, and
    ``conf``'s bias at ``-log((1 - pi) / pi)``, pi = 0.01, so every anchor starts at
    probability 0.01 for every class. There is no background class (sigmoid scores).

    Args:
        n_fg_class (int): classes to detect.
        n_anchor (int): anchors per cell (9).
        in_channels (int): channels of the FPN's maps (256).
    """

    def __init__(self, n_fg_class, n_anchor=9, in_channels=256):
        super().__init__()
        self.n_anchor, self.in_channels = n_anchor, in_channels
        init = {'initialW': initializers.Normal(0.01), 'initial_bias': initializers.Zero()}
        with self.init_scope():
            self.conf_tower = _tower(in_channels)
            self.loc_tower = _tower(in_channels)
            self.loc = L.Convolution2D(in_channels, n_anchor * 4, 3, 1, 1, **init)
        self.reset_classes(n_fg_class)

    def reset_classes(self, n_fg_class):
        """(Re-)make ``conf`` for ``n_fg_class`` classes (prior-probability bias)."""
        if hasattr(self, 'conf'):
            delattr(self, 'conf')
        self.n_fg_class = n_fg_class
        bias = -math.log((1 - PRIOR_PROBABILITY) / PRIOR_PROBABILITY)
        with self.init_scope():
            self.conf = L.Convolution2D(self.in_channels, self.n_anchor * n_fg_class, 3, 1, 1,
                                        initialW=initializers.Normal(0.01),
                                        initial_bias=initializers.Constant(bias))

    def forward(self, hs):
        """FPN maps -> per level ``locs`` (B, K_l, 4) and ``confs`` (B, K_l, n_fg_class)
        Variables, K_l = H_l * W_l * n_anchor in the anchors' order."""
        locs, confs = [], []
        for h in hs:
            conf, loc = h, h
            for conf_conv, loc_conv in zip(self.conf_tower, self.loc_tower):
                conf = F.relu(conf_conv(conf))
                loc = F.relu(loc_conv(loc))
            confs.append(_flatten(self.conf(conf), self.n_fg_class))
            locs.append(_flatten(self.loc(loc), 4))
        return locs, confs
