"""Decoder: DeepLab V3+'s refinement of the ASPP output with low-level features."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.segmentation.deeplab.separable_conv_2d_bn_activ import SeparableConv2DBNActiv


class Decoder(L.Chain):
    """Project the low-level features, concatenate the upsampled ASPP output, refine by
    two 3x3 separable convolutions and classify (Chen et al., ECCV 2018, Sec. 3.1).

    Args:
        in_channels (int): channels of the low-level features and of the ASPP output
            (256 each).
        out_channels (int): the classes.
        proj_channels (int): channels of the low-level projection (48).
        depth_channels (int): channels of the refinement (256).
        bn_kwargs (dict or None): arguments of the refinement's BatchNormalization.
        initialW: initializer of the convolutions.

    NOTE: ``feature_proj`` keeps Chainer's default BN eps (2e-5): ChainerCV builds it
    without ``bn_kwargs`` and evaluated the converted weights that way.
    """

    def __init__(self, in_channels, out_channels, proj_channels=48, depth_channels=256, *,
                 bn_kwargs=None, initialW=None):
        super().__init__()
        common = {'nobias': True, 'dw_activ': F.relu, 'pw_activ': F.relu,
                  'bn_kwargs': bn_kwargs, 'initialW': initialW}
        with self.init_scope():
            self.feature_proj = L.Conv2DBNActiv(in_channels, proj_channels, 1,
                                                initialW=initialW)
            self.conv1 = SeparableConv2DBNActiv(in_channels + proj_channels, depth_channels,
                                                3, 1, 1, 1, **common)
            self.conv2 = SeparableConv2DBNActiv(depth_channels, depth_channels, 3, 1, 1, 1,
                                                **common)
        self.depth_channels = depth_channels
        self.initialW = initialW
        self.reset_logits(out_channels)

    def reset_logits(self, out_channels, initialW=None):
        """(Re)make the 1x1 classifier ``conv_logits`` for ``out_channels`` classes."""
        with self.init_scope():
            self.conv_logits = L.Convolution2D(self.depth_channels, out_channels, 1, 1, 0,
                                               initialW=initialW or self.initialW)

    def forward(self, lowlevel, pool):
        """Class logits (B, out_channels, h, w) at the low-level features' size (h, w)."""
        x = self.feature_proj(lowlevel)
        pool = F.resize_images(pool, x.shape[2:], align_corners=True)
        h = self.conv2(self.conv1(F.concat((pool, x), axis=1)))
        return self.conv_logits(h)
