"""DepthwiseConvolution2D: each input channel convolved with its own filters."""

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.links.connection import convolution_2d
from cvzoo.core.variable import Parameter


class DepthwiseConvolution2D(link.Link):
    """Depthwise 2-D convolution: ``channel_multiplier`` filters per input channel.

    Args:
        in_channels (int or None): input channels; None infers them.
        channel_multiplier (int): filters per input channel.
        ksize (int or pair): kernel size.
        stride, pad (int or pair): as in F.depthwise_convolution_2d.
        nobias (bool): no bias.
        initialW: initializer, array or scalar for W (default LeCunNormal).
        initial_bias: initializer, array or scalar for b (default 0).

    Attributes:
        W (Parameter): (channel_multiplier, in_channels, kh, kw) float32.
        b (Parameter or None): (in_channels * channel_multiplier,) float32, created with W.
    """

    def __init__(self, in_channels, channel_multiplier, ksize, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None):
        super().__init__()
        self.ksize, self.stride, self.pad = convolution_2d.pair(ksize), stride, pad
        self.channel_multiplier = channel_multiplier
        self.nobias = nobias
        with self.init_scope():
            self.W = Parameter(initializers.LeCunNormal() if initialW is None else initialW)
            self.b = None
            if not nobias:
                self.b = Parameter(0.0 if initial_bias is None else initial_bias)
        if in_channels is not None:
            self._initialize_params(in_channels)

    def _initialize_params(self, in_channels):
        self.W.initialize((self.channel_multiplier, in_channels) + self.ksize)
        if self.b is not None:
            self.b.initialize((self.channel_multiplier * in_channels,))

    def forward(self, x):
        """Convolve ``x`` (N, C, H, W); return (N, C * channel_multiplier, H', W')."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.depthwise_convolution_2d(x, self.W, self.b, self.stride, self.pad)
