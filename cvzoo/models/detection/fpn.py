"""FPN: the Feature Pyramid Network neck (Lin et al., CVPR 2017, section 3), ChainerCV's."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers

# feature pixels per input pixel of the five levels of the FPN R-CNNs (ChainerCV's and
# torchvision's): the base's four maps at 1/4 ... 1/32 and one subsampled from the last
FPN_SCALES = (1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64)


class FPN(L.Chain):
    """Lateral 1x1 and output 3x3 convolutions (``channels``) over a backbone's maps.

    The top-down pathway adds each coarser map, upsampled 2x (nearest), to the lateral
    of the finer one; the coarsest output, subsampled by 2, gives one more level.

    Args:
        base (Link): (B, 3, H, W) -> ``len(in_channels)`` maps, each half the previous.
        in_channels (sequence of int): channels of the base's maps.
        scales (tuple of float): feature pixels per input pixel of every output level
            (one more than the base's maps: 1/4, 1/8, 1/16, 1/32, 1/64).
        bn_eps (float or None): None: the lateral and output layers are biased
            convolutions; a number: each is a convolution without bias followed by batch
            normalisation with this epsilon (``conv`` and ``bn`` children; torchvision's
            FPN with ``norm_layer=BatchNorm2d``).
        channels (int): channels of every output level (the papers' 256).

    Attributes:
        channels (int): as given.
    """

    def __init__(self, base, in_channels, scales, *, bn_eps=None, channels=256):
        super().__init__()
        # NOTE: Glorot uniform (ChainerCV: Glorot normal, same variance; cvzoo has no normal)
        init = {'initialW': initializers.GlorotUniform()}
        if bn_eps is None:
            def layer(n_in, ksize, pad):
                return L.Convolution2D(n_in, channels, ksize, 1, pad, **init)
        else:
            def layer(n_in, ksize, pad):
                return L.Conv2DBNActiv(n_in, channels, ksize, 1, pad, activ=None,
                                       bn_kwargs={'eps': bn_eps}, **init)
        with self.init_scope():
            self.base = base
            self.inner = L.ChainList(*[layer(c, 1, 0) for c in in_channels])
            self.outer = L.ChainList(*[layer(channels, 3, 1) for _ in in_channels])
        self.scales = tuple(scales)
        self.channels = channels

    def forward(self, x):
        """(B, 3, H, W), H and W multiples of 32 -> list of (B, channels, H * s, W * s)."""
        return self.pyramid(self.base(x))

    def pyramid(self, hs):
        """The base's maps -> the output levels (lateral, top-down and output layers)."""
        hs = list(hs)
        for i in reversed(range(len(hs))):
            hs[i] = self.inner[i](hs[i])
            if i + 1 < len(hs):
                hs[i] = hs[i] + F.upsample_nearest_2d(hs[i + 1], 2)
        hs = [self.outer[i](h) for i, h in enumerate(hs)]
        while len(hs) < len(self.scales):
            hs.append(hs[-1][:, :, ::2, ::2])
        return hs
