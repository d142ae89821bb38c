"""Conv2DActiv: a convolution followed by an activation (ChainerCV's block, no BN)."""

import cvzoo.core.functions as F
import cvzoo.core.links as L


class Conv2DActiv(L.Chain):
    """Convolution2D then ``activ``; the child is named ``conv`` as in ChainerCV.

    Args:
        in_channels, out_channels, ksize, stride, pad: as in Convolution2D.
        initialW, initial_bias: initializers of the convolution.
        activ (callable or None): the activation (default ReLU).
    """

    def __init__(self, in_channels, out_channels, ksize, stride=1, pad=0, *, initialW=None,
                 initial_bias=None, activ=F.relu):
        super().__init__()
        self.activ = activ
        with self.init_scope():
            self.conv = L.Convolution2D(in_channels, out_channels, ksize, stride, pad,
                                        initialW=initialW, initial_bias=initial_bias)

    def forward(self, x):
        """Convolve ``x`` (B, C, H, W) and apply the activation."""
        h = self.conv(x)
        return h if self.activ is None else self.activ(h)
