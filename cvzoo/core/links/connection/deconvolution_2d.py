"""Deconvolution2D: the 2-D transposed convolution layer."""

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.links.connection import convolution_2d
from cvzoo.core.variable import Parameter


class Deconvolution2D(link.Link):
    """2-D transposed convolution (deconvolution) layer over (N, C, H, W) images.

    ``Deconvolution2D(out_channels, ksize, ...)`` infers the input channels from the
    first input.

    Args:
        in_channels (int or None): input channels; None infers them.
        out_channels (int): output channels.
        ksize (int or pair): kernel size (kh, kw).
        stride, pad (int or pair): as in F.deconvolution_2d.
        nobias (bool): no bias.
        outsize (None or pair): output (H, W); None computes it.
        initialW: initializer, array or scalar for W (default LeCunNormal).
        initial_bias: initializer, array or scalar for b (default 0).
        dilate (int or pair): spacing of the kernel taps.
        groups (int): channel groups.

    Attributes:
        W (Parameter): (in_channels, out_channels / groups, kh, kw) float32.
        b (Parameter or None): (out_channels,) float32.
    """

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 outsize=None, initialW=None, initial_bias=None, *, dilate=1, groups=1):
        super().__init__()
        if ksize is None:
            in_channels, out_channels, ksize = None, in_channels, out_channels
        convolution_2d.check_groups(in_channels, out_channels, groups)
        self.ksize, self.stride, self.pad = convolution_2d.pair(ksize), stride, pad
        self.outsize, self.dilate, self.groups = outsize, dilate, groups
        self.out_channels = out_channels
        with self.init_scope():
            self.W = Parameter(initializers.LeCunNormal() if initialW is None else initialW)
            if in_channels is not None:
                self._initialize_W(in_channels)
            self.b = None
            if not nobias:
                self.b = Parameter(0.0 if initial_bias is None else initial_bias,
                                   (out_channels,))

    def _initialize_W(self, in_channels):
        convolution_2d.check_groups(in_channels, self.out_channels, self.groups)
        self.W.initialize((in_channels, self.out_channels // self.groups) + self.ksize)

    @property
    def in_channels(self):
        """Input channels, or None before the first call of a lazy layer."""
        return None if self.W.array is None else self.W.shape[0]

    def forward(self, x):
        """Apply the layer to ``x`` (N, in_channels, H, W)."""
        if self.W.array is None:
            self._initialize_W(x.shape[1])
        return F.deconvolution_2d(x, self.W, self.b, self.stride, self.pad, self.outsize,
                                  dilate=self.dilate, groups=self.groups)

    def _repr_args(self):
        return (f'{self.in_channels}, {self.out_channels}, ksize={self.ksize}, '
                f'stride={self.stride}, pad={self.pad}, groups={self.groups}')
