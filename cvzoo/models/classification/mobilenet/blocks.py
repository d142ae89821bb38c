"""Building blocks of MobileNetV2 and MobileNetV3: the inverted residual and its SE gate.

Both networks stack "expanded convolutions" (Sandler et al., CVPR 2018, section 3.3):
a 1x1 expansion, a k x k depthwise convolution, optionally (MobileNetV3) a
squeeze-and-excitation gate, and a linear 1x1 projection, with a residual connection
when the block keeps the resolution and the channel count.

Parameter names (ChainerCV's ``ExpandedConv2D`` names, plus ``se``)::

    expand/{conv,bn}  depthwise/{conv,bn}  se/{down,up}/{W,b}  project/{conv,bn}
"""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L


def make_divisible(value, divisor=8, min_value=None) -> int:
    """Round a channel count to the nearest multiple of ``divisor`` (never down by > 10 %).

    The rule of the TensorFlow MobileNet code that torchvision follows: width
    multipliers are applied to the paper's channel counts, and the result is rounded
    to a multiple of 8, at least ``min_value`` (default ``divisor``).

    >>> make_divisible(32 * 1.4), make_divisible(1280 * 1.4), make_divisible(72 // 4)
    (48, 1792, 24)
    """
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    if rounded < 0.9 * value:  # NOTE: rounding down must not lose more than 10 %
        rounded += divisor
    return rounded


def hard_sigmoid_torch(x):
    """torchvision's Hardsigmoid, ``relu6(x + 3) / 6`` (not Chainer's ``0.2 x + 0.5``)."""
    return F.relu6(x + 3.0) * (1.0 / 6.0)


class SqueezeExcitation(L.Chain):
    """MobileNetV3's squeeze-and-excitation gate (Howard et al., ICCV 2019, section 5.3).

    ``u * hard_sigmoid(up(relu(down(mean_hw(u)))))``, with 1x1 convolutions (with bias)
    as the two fully connected layers, as in torchvision.

    Args:
        n_channel (int): channels of the input and the output.
        n_hidden (int): channels of the bottleneck.
        initialW: initializer of the two convolutions.

    Attributes:
        down, up (Convolution2D): the two 1x1 layers.
    """

    def __init__(self, n_channel, n_hidden, initialW=None):
        super().__init__()
        with self.init_scope():
            self.down = L.Convolution2D(n_channel, n_hidden, 1, initialW=initialW)
            self.up = L.Convolution2D(n_hidden, n_channel, 1, initialW=initialW)

    def forward(self, u):
        """Gate ``u`` (B, C, H, W) channel by channel; returns the same shape."""
        z = F.mean(u, axis=(2, 3), keepdims=True)
        return u * hard_sigmoid_torch(self.up(F.relu(self.down(z))))


class ExpandedConv2D(L.Chain):
    """Inverted residual block: expand, depthwise, (SE), project, (+ input).

    Args:
        in_channels (int): input channels.
        expanded_channels (int): channels of the depthwise stage; equal to
            ``in_channels`` means no ``expand`` layer (the first block of both nets).
        out_channels (int): output channels.
        ksize (int): depthwise kernel size (padding ``ksize // 2`` keeps the size).
        stride (int): depthwise stride, 1 or 2.
        activ (callable): activation after expand and depthwise (ReLU6, ReLU or
            hard swish); the projection is linear.
        se_channels (int or None): bottleneck of an SE gate after the depthwise stage;
            None for none.
        initialW: initializer of the convolutions.
        bn_kwargs (dict or None): arguments of every BatchNormalization.

    Attributes:
        expand (Conv2DBNActiv, absent without expansion), depthwise (Conv2DBNActiv),
        se (SqueezeExcitation, when asked), project (Conv2DBNActiv without activation).
    """

    def __init__(self, in_channels, expanded_channels, out_channels, *, ksize=3, stride=1,
                 activ=F.relu6, se_channels=None, initialW=None, bn_kwargs=None):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f'stride: expected 1 or 2, got {stride!r}')
        self.residual = stride == 1 and in_channels == out_channels
        conv = functools.partial(L.Conv2DBNActiv, initialW=initialW, bn_kwargs=bn_kwargs)
        with self.init_scope():
            if expanded_channels != in_channels:
                self.expand = conv(in_channels, expanded_channels, 1, activ=activ)
            self.depthwise = conv(expanded_channels, expanded_channels, ksize, stride,
                                  ksize // 2, groups=expanded_channels, activ=activ)
            if se_channels is not None:
                self.se = SqueezeExcitation(expanded_channels, se_channels, initialW)
            self.project = conv(expanded_channels, out_channels, 1, activ=None)

    def forward(self, x):
        """Apply the block to ``x`` (B, in_channels, H, W) -> (B, out_channels, H', W')."""
        h = self.expand(x) if hasattr(self, 'expand') else x
        h = self.depthwise(h)
        if hasattr(self, 'se'):
            h = self.se(h)
        h = self.project(h)
        return h + x if self.residual else h
