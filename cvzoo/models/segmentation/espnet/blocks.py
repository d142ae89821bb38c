"""The building blocks of ESPNet (Mehta et al., ECCV 2018).

All convolutions have no bias, every batch normalisation has eps=1e-3 (the original's
``nn.BatchNorm2d(..., eps=1e-03)``) and every PReLU has one slope per channel.

- :class:`CBR`: convolution, batch normalisation, PReLU;
- :class:`BR`: batch normalisation, PReLU;
- :class:`ESPBlock`: the efficient spatial pyramid module (a 1x1 reduction, five
  parallel dilated 3x3 convolutions, hierarchical feature fusion, optional identity);
- :class:`StridedESPBlock`: its strided, downsampling variant;
- :func:`input_projection`: the input image average-pooled ``n_times`` by 2.
"""

import cvzoo.core.functions as F
import cvzoo.core.links as L

BN_EPS = 1e-3
# The dilation rates of the parallel branches after the first (which has dilation 1).
DILATIONS = (2, 4, 8, 16)


def input_projection(x, n_times):
    """Average-pool ``x`` ``n_times`` with a 3x3 window, stride 2 and padding 1.

    The padded cells count as zeros (the divisor is always 9), as PyTorch's default
    ``count_include_pad=True`` (Sec. 3.1, "input reinforcement").

    Args:
        x (Variable or array): (B, C, H, W) float32.
        n_times (int): how many times to pool.

    Returns:
        Variable: (B, C, H', W') with each side ceil'ed in half ``n_times`` times.
    """
    for _ in range(n_times):
        x = F.average_pooling_2d(x, 3, stride=2, pad=1)
    return x


class BR(L.Chain):
    """Batch normalisation then per-channel PReLU.

    Args:
        n_channel (int): the channels.

    Attributes:
        bn (L.BatchNormalization), act (L.PReLU).
    """

    def __init__(self, n_channel):
        super().__init__()
        with self.init_scope():
            self.bn = L.BatchNormalization(n_channel, eps=BN_EPS)
            self.act = L.PReLU((n_channel,))

    def forward(self, x):
        """(B, n_channel, H, W) -> (B, n_channel, H, W)."""
        return self.act(self.bn(x))


class CBR(L.Chain):
    """A bias-free KxK convolution (padding (K - 1) / 2), batch norm, PReLU.

    Args:
        in_channels, out_channels (int): channels.
        ksize (int): the odd kernel size K.
        stride (int): the convolution's stride.

    Attributes:
        conv (L.Convolution2D), bn (L.BatchNormalization), act (L.PReLU).
    """

    def __init__(self, in_channels, out_channels, ksize, stride=1):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(in_channels, out_channels, ksize, stride,
                                        (ksize - 1) // 2, nobias=True)
            self.bn = L.BatchNormalization(out_channels, eps=BN_EPS)
            self.act = L.PReLU((out_channels,))

    def forward(self, x):
        """(B, in_channels, H, W) -> (B, out_channels, H / stride, W / stride)."""
        return self.act(self.bn(self.conv(x)))


def _branch_widths(out_channels):
    """(n, n1): four branches of n = out // 5 channels and the first of n1 = out - 4 n."""
    n = out_channels // 5
    return n, out_channels - 4 * n


def _add_pyramid(chain, n, n1):
    """Register the five parallel 3x3 convolutions d1, d2, d4, d8 and d16 on ``chain``."""
    chain.d1 = L.Convolution2D(n, n1, 3, 1, 1, nobias=True)
    for dilation in DILATIONS:
        conv = L.Convolution2D(n, n, 3, 1, dilation, nobias=True, dilate=dilation)
        setattr(chain, f'd{dilation}', conv)


def _pyramid(chain, x):
    """Run the five branches on ``x`` and fuse them hierarchically (Sec. 3.1, HFF).

    The outputs of the dilated branches are summed cumulatively (d2, d2 + d4,
    d2 + d4 + d8, ...) before the concatenation, which removes gridding artefacts.
    """
    outputs = [chain.d1(x)]
    total = None
    for dilation in DILATIONS:
        branch = getattr(chain, f'd{dilation}')(x)
        total = branch if total is None else total + branch
        outputs.append(total)
    return F.concat(outputs, axis=1)


class ESPBlock(L.Chain):
    """The ESP module (the original's ``DilatedParllelResidualBlockB``).

    A 1x1 convolution reduces the input to n = out_channels // 5 channels; five
    parallel 3x3 convolutions with dilation 1, 2, 4, 8, 16 (the first giving
    n1 = out_channels - 4 n channels) follow, fused hierarchically and concatenated
    to out_channels; the block input is added when ``add``; BR closes the block.

    Args:
        in_channels, out_channels (int): channels (equal when ``add``).
        add (bool): add the input (a residual connection).

    Attributes:
        c1, d1, d2, d4, d8, d16 (L.Convolution2D), br (BR).
    """

    def __init__(self, in_channels, out_channels, add=True):
        super().__init__()
        if add and in_channels != out_channels:
            raise ValueError(f'in_channels: expected out_channels={out_channels} with '
                             f'add=True, got {in_channels}')
        n, n1 = _branch_widths(out_channels)
        self.add = add
        with self.init_scope():
            self.c1 = L.Convolution2D(in_channels, n, 1, nobias=True)
            _add_pyramid(self, n, n1)
            self.br = BR(out_channels)

    def forward(self, x):
        """(B, in_channels, H, W) -> (B, out_channels, H, W)."""
        h = _pyramid(self, self.c1(x))
        if self.add:
            h = h + x
        return self.br(h)


class StridedESPBlock(L.Chain):
    """The downsampling ESP module (the original's ``DownSamplerB``).

    As :class:`ESPBlock`, but the reduction is a 3x3 stride-2 convolution and there is
    no residual connection. The closing BN and PReLU sit on the block itself.

    Args:
        in_channels, out_channels (int): channels.

    Attributes:
        c1, d1, d2, d4, d8, d16 (L.Convolution2D), bn (L.BatchNormalization),
        act (L.PReLU).
    """

    def __init__(self, in_channels, out_channels):
        super().__init__()
        n, n1 = _branch_widths(out_channels)
        with self.init_scope():
            self.c1 = L.Convolution2D(in_channels, n, 3, 2, 1, nobias=True)
            _add_pyramid(self, n, n1)
            self.bn = L.BatchNormalization(out_channels, eps=BN_EPS)
            self.act = L.PReLU((out_channels,))

    def forward(self, x):
        """(B, in_channels, H, W) -> (B, out_channels, ceil(H / 2), ceil(W / 2))."""
        return self.act(self.bn(_pyramid(self, self.c1(x))))
