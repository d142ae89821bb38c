"""DilatedConvolution2D: a 2-D convolution whose kernel taps are spaced apart."""

import cvzoo.core.functions as F
from cvzoo.core.links.connection import convolution_2d


class DilatedConvolution2D(convolution_2d.Convolution2D):
    """Dilated 2-D convolution layer (Chainer's argument order: dilate before nobias).

    Args:
        in_channels (int or None): input channels; None infers them.
        out_channels (int): output channels.
        ksize (int or pair): kernel size.
        stride, pad, dilate (int or pair): as in F.dilated_convolution_2d.
        nobias (bool): no bias.
        initialW, initial_bias: as in Convolution2D.

    Attributes:
        W (Parameter): (out_channels, in_channels, kh, kw) float32.
        b (Parameter or None): (out_channels,) float32.
    """

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, dilate=1,
                 nobias=False, initialW=None, initial_bias=None):
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate=dilate)

    def forward(self, x):
        """Convolve ``x`` (N, in_channels, H, W) with the dilated kernel."""
        if self.W.array is None:
            self._initialize_W(x.shape[1])
        return F.dilated_convolution_2d(x, self.W, self.b, self.stride, self.pad, self.dilate)
