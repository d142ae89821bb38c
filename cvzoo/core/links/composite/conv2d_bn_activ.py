"""Conv2DBNActiv: convolution, batch normalisation and an activation (ChainerCV's block)."""

import cvzoo.core.functions as F
from cvzoo.core.links import link
from cvzoo.core.links.connection import convolution_2d
from cvzoo.core.links.normalization import batch_normalization


class Conv2DBNActiv(link.Chain):
    """Convolution2D, then BatchNormalization, then ``activ``.

    ``Conv2DBNActiv(out_channels, ksize, ...)`` infers the input channels.

    Args:
        in_channels (int or None): input channels.
        out_channels (int): output channels.
        ksize, stride, pad, dilate, groups: as in Convolution2D.
        nobias (bool): no convolution bias (default True: BN adds one).
        initialW, initial_bias: as in Convolution2D.
        activ (callable or None): activation; None for none.
        bn_kwargs (dict or None): arguments of BatchNormalization.

    Attributes:
        conv (Convolution2D), bn (BatchNormalization): the children.
    """

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, dilate=1,
                 groups=1, nobias=True, initialW=None, initial_bias=None, activ=F.relu,
                 bn_kwargs=None):
        super().__init__()
        if ksize is None:
            in_channels, out_channels, ksize = None, in_channels, out_channels
        self.activ = activ
        with self.init_scope():
            self.conv = convolution_2d.Convolution2D(
                in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                initial_bias, dilate=dilate, groups=groups)
            self.bn = batch_normalization.BatchNormalization(out_channels, **(bn_kwargs or {}))

    def forward(self, x):
        """Apply convolution, normalisation and activation to ``x`` (N, C, H, W)."""
        h = self.bn(self.conv(x))
        return h if self.activ is None else self.activ(h)
