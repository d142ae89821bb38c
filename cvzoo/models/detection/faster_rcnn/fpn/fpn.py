"""FPN: the Feature Pyramid Network neck (Lin et al., CVPR 2017, section 3), ChainerCV's."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers


class FPN(L.Chain):
    """Lateral 1x1 and output 3x3 convolutions (256 channels) over a backbone's maps.

    The top-down pathway adds each coarser map, upsampled 2x (nearest), to the lateral
    of the finer one; the coarsest output, subsampled by 2, gives one more level.

    Args:
        base (Link): (B, 3, H, W) -> ``len(in_channels)`` maps, each half the previous.
        in_channels (sequence of int): channels of the base's maps.
        scales (tuple of float): feature pixels per input pixel of every output level
            (one more than the base's maps: 1/4, 1/8, 1/16, 1/32, 1/64).
    """

    def __init__(self, base, in_channels, scales):
        super().__init__()
        # NOTE: Glorot uniform (ChainerCV: Glorot normal, same variance; cvzoo has no normal)
        init = {'initialW': initializers.GlorotUniform()}
        with self.init_scope():
            self.base = base
            self.inner = L.ChainList(*[L.Convolution2D(c, 256, 1, **init) for c in in_channels])
            self.outer = L.ChainList(*[L.Convolution2D(256, 256, 3, 1, 1, **init)
                                       for _ in in_channels])
        self.scales = tuple(scales)

    def forward(self, x):
        """(B, 3, H, W), H and W multiples of 32 -> list of (B, 256, H * s, W * s)."""
        hs = list(self.base(x))
        for i in reversed(range(len(hs))):
            hs[i] = self.inner[i](hs[i])
            if i + 1 < len(hs):
                hs[i] = hs[i] + F.upsample_nearest_2d(hs[i + 1], 2)
        hs = [self.outer[i](h) for i, h in enumerate(hs)]
        while len(hs) < len(self.scales):
            hs.append(hs[-1][:, :, ::2, ::2])
        return hs
