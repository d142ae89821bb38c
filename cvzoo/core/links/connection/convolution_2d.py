"""Convolution2D: the 2-D convolution layer."""

import numbers

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter


def pair(value):
    """(value, value) for an int, the tuple itself for a pair."""
    return (int(value), int(value)) if isinstance(value, numbers.Integral) else tuple(value)


def check_groups(in_channels, out_channels, groups):
    """Raise a ValueError when the channel counts are not multiples of ``groups``."""
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f'groups: expected a positive int, got {groups!r}')
    for name, n in (('in_channels', in_channels), ('out_channels', out_channels)):
        if n is not None and n % groups:
            raise ValueError(f'{name}: expected a multiple of groups={groups}, got {n}')


class Convolution2D(link.Link):
    """2-D convolution layer over (N, C, H, W) images.

    ``Convolution2D(out_channels, ksize, ...)`` (in_channels omitted) infers the input
    channels from the first input.

    Args:
        in_channels (int or None): input channels; None infers them.
        out_channels (int): output channels.
        ksize (int or pair): kernel size (kh, kw).
        stride, pad (int or pair): as in F.convolution_2d.
        nobias (bool): no bias.
        initialW: initializer, array or scalar for W (default LeCunNormal).
        initial_bias: initializer, array or scalar for b (default 0).
        dilate (int or pair): spacing of the kernel taps.
        groups (int): channel groups (in and out channels must be multiples of it).

    Attributes:
        W (Parameter): (out_channels, in_channels / groups, kh, kw) float32.
        b (Parameter or None): (out_channels,) float32.
    """

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None, *, dilate=1, groups=1):
        super().__init__()
        if ksize is None:
            in_channels, out_channels, ksize = None, in_channels, out_channels
        check_groups(in_channels, out_channels, groups)
        self.ksize, self.stride, self.pad = pair(ksize), stride, pad
        self.dilate, self.groups = dilate, groups
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
        check_groups(in_channels, self.out_channels, self.groups)
        self.W.initialize((self.out_channels, in_channels // self.groups) + self.ksize)

    @property
    def in_channels(self):
        """Input channels, or None before the first call of a lazy layer."""
        return None if self.W.array is None else self.W.shape[1] * self.groups

    def forward(self, x):
        """Convolve ``x`` (N, in_channels, H, W); return (N, out_channels, H', W')."""
        if self.W.array is None:
            self._initialize_W(x.shape[1])
        return F.convolution_2d(x, self.W, self.b, self.stride, self.pad,
                                dilate=self.dilate, groups=self.groups)

    def _repr_args(self):
        return (f'{self.in_channels}, {self.out_channels}, ksize={self.ksize}, '
                f'stride={self.stride}, pad={self.pad}, dilate={self.dilate}, '
                f'groups={self.groups}, nobias={self.b is None}')
