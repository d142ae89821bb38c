"""torchvision's box head of its v2 R-CNNs (Li et al. 2021): ``MultiScaleRoIAlign`` over
P2 ... P5, ``FastRCNNConvFCHead((256, 7, 7), [256] * 4, [1024], norm_layer=BatchNorm2d)``
and ``FastRCNNPredictor``."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.detection.faster_rcnn import torchvision_box_head

BN_EPS = 1e-5  # torch's BatchNorm2d


class TorchvisionConvFCBoxHead(torchvision_box_head.TorchvisionBoxHead):
    """The v2 box head: :class:`TorchvisionBoxHead`'s pooling and predictor with
    ``conv1`` ... ``conv4`` (3x3, 256 channels, no bias, BN with eps 1e-5, ReLU;
    torchvision's ``box_head.{0..3}``) and one ``fc1`` (1024, ReLU; its ``box_head.5``)
    in place of the two fully connected layers.

    The BN layers use the batch's statistics in training (the sampled RoIs) and their
    running averages in test mode, as torchvision's BatchNorm2d.

    Args:
        n_class (int): classes including the background.
        scales (tuple of float): feature pixels per input pixel of the FPN's levels.
        in_channels (int): channels of the FPN's maps.
    """

    n_conv = 4
    conv_channels = 256

    def make_layers(self, in_channels):
        """Build ``conv1`` ... ``conv4`` (He normal, fan out, as torchvision's) and
        ``fc1`` (torch's Linear initialisation)."""
        init = {'initialW': initializers.HeNormal(1, fan_option='fan_out')}
        for i in range(1, self.n_conv + 1):
            n_in = in_channels if i == 1 else self.conv_channels
            setattr(self, f'conv{i}', L.Conv2DBNActiv(n_in, self.conv_channels, 3, 1, 1,
                                                      bn_kwargs={'eps': BN_EPS}, **init))
        fc1_in = self.conv_channels * self.roi_size ** 2
        self.fc1 = L.Linear(fc1_in, self.fc_size, initialW=initializers.Uniform(fc1_in ** -0.5),
                            initial_bias=initializers.Uniform(fc1_in ** -0.5))

    def box_features(self, h):
        """(R, C, 7, 7) pooled RoIs -> (R, 1024): the four convolutions, flattened in
        (channel, row, column) order as torch's ``Flatten``, then ``fc1``."""
        for i in range(1, self.n_conv + 1):
            h = getattr(self, f'conv{i}')(h)
        h = F.reshape(h, (len(h), int(numpy.prod(h.shape[1:]))))
        return F.relu(self.fc1(h))
