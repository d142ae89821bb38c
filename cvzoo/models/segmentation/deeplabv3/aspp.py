"""ASPP: atrous spatial pyramid pooling (Chen et al., 2017, section 3.3), as torchvision."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.segmentation import torchvision_names

BN_KWARGS = {'eps': 1e-5}  # torchvision's BatchNorm2d
DROPOUT_RATIO = 0.5


class ASPP(L.Chain):
    """Five parallel branches, concatenated and projected to ``out_channels``.

    The branches: a 1x1 convolution, one 3x3 convolution per atrous rate (dilation and
    padding equal to the rate), and image pooling (the global mean, a 1x1 convolution,
    spread back over the map). Each convolution is followed by batch normalisation and
    ReLU; the projection (1x1, BN, ReLU) is followed by dropout (0.5, training only).

    Args:
        in_channels (int): channels of the features.
        atrous_rates (tuple of int): dilations of the 3x3 branches (torchvision: 12, 24,
            36 at output stride 8).
        out_channels (int): channels of every branch and of the output.
        initialW: initializer of the convolutions.

    Attributes:
        conv, atrous_conv1 .. atrous_conv{len(atrous_rates)}, image_pooling, project
        (Conv2DBNActiv).
    """

    def __init__(self, in_channels, atrous_rates=(12, 24, 36), out_channels=256,
                 initialW=None):
        super().__init__()
        self.n_rate = len(atrous_rates)
        common = {'initialW': initialW, 'bn_kwargs': BN_KWARGS}
        with self.init_scope():
            self.conv = L.Conv2DBNActiv(in_channels, out_channels, 1, **common)
            for k, rate in enumerate(atrous_rates, 1):
                setattr(self, f'atrous_conv{k}', L.Conv2DBNActiv(
                    in_channels, out_channels, 3, 1, rate, dilate=rate, **common))
            self.image_pooling = L.Conv2DBNActiv(in_channels, out_channels, 1, **common)
            self.project = L.Conv2DBNActiv((self.n_rate + 2) * out_channels, out_channels, 1,
                                           **common)

    def forward(self, x):
        """(B, in_channels, h, w) -> (B, out_channels, h, w)."""
        branches = [self.conv(x)]
        branches += [self[f'atrous_conv{k}'](x) for k in range(1, self.n_rate + 1)]
        pooled = self.image_pooling(F.mean(x, axis=(2, 3), keepdims=True))
        # NOTE: bilinear resizing of a 1x1 map (torchvision) is a broadcast.
        branches.append(F.broadcast_to(pooled, pooled.shape[:2] + x.shape[2:]))
        return F.dropout(self.project(F.concat(branches, axis=1)), DROPOUT_RATIO)

    def add_torchvision_names(self, table, torch_prefix, cvzoo_prefix):
        """Add torchvision's ``ASPP`` names (``convs.{i}``, ``project``) to ``table``."""
        torchvision_names.conv_bn(table, f'{torch_prefix}.convs.0', f'{cvzoo_prefix}/conv')
        for k in range(1, self.n_rate + 1):
            torchvision_names.conv_bn(table, f'{torch_prefix}.convs.{k}',
                                      f'{cvzoo_prefix}/atrous_conv{k}')
        pooling = f'{torch_prefix}.convs.{self.n_rate + 1}'
        # NOTE: torchvision's ASPPPooling is (pool, conv, BN, ReLU): the conv is ``.1``.
        table[f'{pooling}.1'] = (f'{cvzoo_prefix}/image_pooling/conv', 'conv')
        table[f'{pooling}.2'] = (f'{cvzoo_prefix}/image_pooling/bn', 'bn')
        torchvision_names.conv_bn(table, f'{torch_prefix}.project', f'{cvzoo_prefix}/project')
