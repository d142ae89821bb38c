"""DeepLabHead: torchvision's DeepLabV3 head (ASPP, a 3x3 convolution, a 1x1 classifier)."""

import cvzoo.core.links as L
from cvzoo.models.segmentation.deeplabv3.aspp import ASPP

BN_KWARGS = {'eps': 1e-5}  # torchvision's BatchNorm2d
ATROUS_RATES = (12, 24, 36)  # at output stride 8 (Chen et al., 2017, section 3.3)


class DeepLabHead(L.Chain):
    """Class scores from features: ASPP to 256 channels, 3x3 convolution (no bias), batch
    normalisation and ReLU, then a 1x1 convolution with bias.

    Args:
        in_channels (int): channels of the features.
        n_class (int): channels of the scores.
        initialW: initializer of the convolutions.
        atrous_rates (tuple of int): the ASPP rates.

    Attributes:
        aspp (ASPP), conv (Conv2DBNActiv), classifier (Convolution2D).
    """

    def __init__(self, in_channels, n_class, initialW=None, atrous_rates=ATROUS_RATES):
        super().__init__()
        with self.init_scope():
            self.aspp = ASPP(in_channels, atrous_rates, 256, initialW=initialW)
            self.conv = L.Conv2DBNActiv(256, 256, 3, 1, 1, initialW=initialW,
                                        bn_kwargs=BN_KWARGS)
            self.classifier = L.Convolution2D(256, n_class, 1, initialW=initialW)

    def forward(self, x):
        """(B, in_channels, h, w) features -> (B, n_class, h, w) scores."""
        return self.classifier(self.conv(self.aspp(x)))

    def add_torchvision_names(self, table, torch_prefix, cvzoo_prefix):
        """Add torchvision's ``DeepLabHead`` names (``.0`` ASPP, ``.1``/``.2`` conv and
        BN, ``.4`` classifier) to ``table``."""
        self.aspp.add_torchvision_names(table, f'{torch_prefix}.0', f'{cvzoo_prefix}/aspp')
        table[f'{torch_prefix}.1'] = (f'{cvzoo_prefix}/conv/conv', 'conv')
        table[f'{torch_prefix}.2'] = (f'{cvzoo_prefix}/conv/bn', 'bn')
        table[f'{torch_prefix}.4'] = (f'{cvzoo_prefix}/classifier', 'conv')
