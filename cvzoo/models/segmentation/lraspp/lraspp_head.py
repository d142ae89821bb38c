"""LRASPPHead: the Lite R-ASPP head of MobileNetV3 (Howard et al., ICCV 2019, section 6.4)."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.segmentation import torchvision_names

BN_KWARGS = {'eps': 1e-5}  # torchvision's BatchNorm2d (the backbone's use 1e-3)


class LRASPPHead(L.Chain):
    """Class scores from a low-level (stride 8) and a high-level (stride 16) feature map.

    The high-level map goes through a 1x1 convolution, BN and ReLU, gated channel-wise by
    ``sigmoid(conv(mean_hw(high)))`` (squeeze-and-excitation-like, without its hidden
    layer), is resized bilinearly (half-pixel centres) to the low-level map's size and
    classified by a 1x1 convolution; a 1x1 convolution of the low-level map is added.

    Args:
        low_channels (int): channels of the low-level map.
        high_channels (int): channels of the high-level map.
        n_class (int): channels of the scores.
        inter_channels (int): channels of the gated branch.
        initialW: initializer of the convolutions.

    Attributes:
        cbr (Conv2DBNActiv), scale (Convolution2D without bias), low_classifier,
        high_classifier (Convolution2D with bias).
    """

    def __init__(self, low_channels, high_channels, n_class, inter_channels=128,
                 initialW=None):
        super().__init__()
        with self.init_scope():
            self.cbr = L.Conv2DBNActiv(high_channels, inter_channels, 1, initialW=initialW,
                                       bn_kwargs=BN_KWARGS)
            self.scale = L.Convolution2D(high_channels, inter_channels, 1, nobias=True,
                                         initialW=initialW)
            self.low_classifier = L.Convolution2D(low_channels, n_class, 1, initialW=initialW)
            self.high_classifier = L.Convolution2D(inter_channels, n_class, 1,
                                                   initialW=initialW)

    def forward(self, low, high):
        """(B, low_channels, h, w) and (B, high_channels, h', w') -> (B, n_class, h, w)."""
        gate = F.sigmoid(self.scale(F.mean(high, axis=(2, 3), keepdims=True)))
        h = self.cbr(high) * gate
        h = F.resize_images(h, low.shape[2:], align_corners=False)
        return self.low_classifier(low) + self.high_classifier(h)

    def add_torchvision_names(self, table, torch_prefix, cvzoo_prefix):
        """Add torchvision's ``LRASPPHead`` names to ``table``."""
        torchvision_names.conv_bn(table, f'{torch_prefix}.cbr', f'{cvzoo_prefix}/cbr')
        # NOTE: ``scale`` is (pool, conv, sigmoid) in torchvision: the conv is ``.1``.
        table[f'{torch_prefix}.scale.1'] = (f'{cvzoo_prefix}/scale', 'conv')
        for name in ('low_classifier', 'high_classifier'):
            table[f'{torch_prefix}.{name}'] = (f'{cvzoo_prefix}/{name}', 'conv')
