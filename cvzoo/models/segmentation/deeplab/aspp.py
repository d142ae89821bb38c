"""SeparableASPP: atrous spatial pyramid pooling with separable convolutions."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.segmentation.deeplab.separable_conv_2d_bn_activ import SeparableConv2DBNActiv

DILATES = (12, 24, 36)


class SeparableASPP(L.Chain):
    """Five parallel branches, concatenated and projected (DeepLab V3, Sec. 3.3; V3+).

    The branches are image pooling (global average, a 1x1 Conv2DBNActiv, broadcast back),
    a 1x1 Conv2DBNActiv and three 3x3 separable convolutions with atrous rates
    ``dilates`` (ReLU after both parts); a 1x1 Conv2DBNActiv projects the concatenation,
    followed by dropout (ratio 0.5, training only).

    Args:
        in_channels (int): input channels (2048).
        out_channels (int): channels of every branch and of the output (256).
        dilates (tuple of 3 int): the atrous rates (those of output stride 8).
        bn_kwargs (dict or None): arguments of every BatchNormalization.
        initialW: initializer of the convolutions.
    """

    def __init__(self, in_channels, out_channels, dilates=DILATES, *, bn_kwargs=None,
                 initialW=None):
        super().__init__()
        common = {'bn_kwargs': bn_kwargs, 'initialW': initialW}
        with self.init_scope():
            self.image_pooling_conv = L.Conv2DBNActiv(in_channels, out_channels, 1, **common)
            self.conv1x1 = L.Conv2DBNActiv(in_channels, out_channels, 1, **common)
            for k, dilate in enumerate(dilates):
                setattr(self, f'atrous{k + 1}', SeparableConv2DBNActiv(
                    in_channels, out_channels, 3, 1, dilate, dilate, dw_activ=F.relu,
                    pw_activ=F.relu, **common))
            self.proj = L.Conv2DBNActiv(5 * out_channels, out_channels, 1, **common)

    def forward(self, x):
        """(B, in_channels, H, W) -> (B, out_channels, H, W)."""
        pooled = self.image_pooling_conv(F.mean(x, axis=(2, 3), keepdims=True))
        branches = [F.broadcast_to(pooled, pooled.shape[:2] + x.shape[2:]), self.conv1x1(x),
                    self.atrous1(x), self.atrous2(x), self.atrous3(x)]
        return F.dropout(self.proj(F.concat(branches, axis=1)))
