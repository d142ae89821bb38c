"""Fire: SqueezeNet's module (Iandola et al., 2016, section 3.2)."""

import cvzoo.core.functions as F
import cvzoo.core.links as L


class Fire(L.Chain):
    """A 1x1 "squeeze" convolution feeding parallel 1x1 and 3x3 "expand" convolutions.

    ``concat(relu(expand1x1(s)), relu(expand3x3(s)))`` with ``s = relu(squeeze(x))``,
    along the channels; every convolution has a bias.

    Args:
        in_channels (int): input channels.
        squeeze_channels (int): channels of the squeeze layer (s1x1 in the paper).
        expand1x1_channels, expand3x3_channels (int): e1x1 and e3x3 of the paper; the
            output has their sum.
        initialW: initializer of the three convolutions.

    Attributes:
        squeeze, expand1x1, expand3x3 (Convolution2D): named as in torchvision.
    """

    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels,
                 initialW=None):
        super().__init__()
        with self.init_scope():
            self.squeeze = L.Convolution2D(in_channels, squeeze_channels, 1, initialW=initialW)
            self.expand1x1 = L.Convolution2D(squeeze_channels, expand1x1_channels, 1,
                                             initialW=initialW)
            self.expand3x3 = L.Convolution2D(squeeze_channels, expand3x3_channels, 3, pad=1,
                                             initialW=initialW)

    def forward(self, x):
        """(B, in_channels, H, W) -> (B, expand1x1_channels + expand3x3_channels, H, W)."""
        s = F.relu(self.squeeze(x))
        return F.concat((F.relu(self.expand1x1(s)), F.relu(self.expand3x3(s))), axis=1)
