"""FCNHead: torchvision's FCN classifier (3x3 conv, BN, ReLU, dropout, 1x1 conv)."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.segmentation import torchvision_names

BN_KWARGS = {'eps': 1e-5}  # torchvision's BatchNorm2d
DROPOUT_RATIO = 0.1


class FCNHead(L.Chain):
    """Class scores from features: 3x3 convolution to ``in_channels // 4`` channels (no
    bias), batch normalisation, ReLU, dropout (0.1, training only), 1x1 convolution.

    This is torchvision's ``FCNHead``, the head of its FCN models and the auxiliary head
    of its FCN and DeepLabV3 models.

    Args:
        in_channels (int): channels of the features.
        n_class (int): channels of the scores.
        initialW: initializer of both convolutions.

    Attributes:
        conv (Conv2DBNActiv), classifier (Convolution2D with bias).
    """

    def __init__(self, in_channels, n_class, initialW=None):
        super().__init__()
        with self.init_scope():
            self.conv = L.Conv2DBNActiv(in_channels, in_channels // 4, 3, 1, 1,
                                        initialW=initialW, bn_kwargs=BN_KWARGS)
            self.classifier = L.Convolution2D(in_channels // 4, n_class, 1, initialW=initialW)

    def forward(self, x):
        """(B, in_channels, h, w) features -> (B, n_class, h, w) scores."""
        return self.classifier(F.dropout(self.conv(x), DROPOUT_RATIO))

    def add_torchvision_names(self, table, torch_prefix, cvzoo_prefix):
        """Add this head's torchvision names (``{torch_prefix}.0/.1/.4``) to ``table``."""
        torchvision_names.conv_bn(table, torch_prefix, f'{cvzoo_prefix}/conv')
        table[f'{torch_prefix}.4'] = (f'{cvzoo_prefix}/classifier', 'conv')
