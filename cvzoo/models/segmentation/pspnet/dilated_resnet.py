"""DilatedResNet: ResNet-50/101 with a deep stem and output stride 8, PSPNet's backbone.

Parameter names follow ChainerCV's ``DilatedResNet`` (``conv1_1/conv/W``,
``res4/b3/conv2/bn/gamma``, ...), so ChainerCV's PSPNet files map one to one.
"""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.common import resnet_blocks
from cvzoo.models.common.pickable_sequential_chain import PickableSequentialChain

N_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}
# (mid channels, out channels, stride, dilation) of res2 .. res5.
_STAGES = ((64, 256, 1, 1), (128, 512, 2, 1), (256, 1024, 1, 2), (512, 2048, 1, 4))


class DilatedResNet(PickableSequentialChain):
    """A ResNet whose last two stages dilate instead of striding (output stride 8).

    The stem is three 3x3 convolutions (``conv1_1`` with stride 2, ``conv1_2``,
    ``conv1_3`` to 128 channels) and a 3x3 stride-2 max pooling; the stages are
    bottleneck stages with the stride in the 3x3 convolution. ``res4`` is dilated by 2
    and ``res5`` by 4. Batch normalisation uses eps 2e-5 (Chainer's default).

    Layers (all pickable): ``conv1_1, conv1_2, conv1_3, pool1, res2, res3, res4, res5``;
    ``res4`` is (B, 1024, H', W') and ``res5`` (B, 2048, H', W') with
    H' = ceil(ceil(H / 2) / 2) / 2 rounded up again (90 for H = 713).

    Args:
        n_layer (int): 50 or 101.
        initialW: initializer of the convolutions (default He normal).
    """

    def __init__(self, n_layer, initialW=None):
        super().__init__()
        if n_layer not in N_BLOCKS:
            raise ValueError(f'n_layer: expected one of {sorted(N_BLOCKS)}, got {n_layer!r}')
        kwargs = {'initialW': initialW}
        with self.init_scope():
            self.conv1_1 = L.Conv2DBNActiv(3, 64, 3, 2, 1, **kwargs)
            self.conv1_2 = L.Conv2DBNActiv(64, 64, 3, 1, 1, **kwargs)
            self.conv1_3 = L.Conv2DBNActiv(64, 128, 3, 1, 1, **kwargs)
            self.pool1 = functools.partial(F.max_pooling_2d, ksize=3, stride=2, pad=1)
            in_channels = 128
            for k, (n_block, stage) in enumerate(zip(N_BLOCKS[n_layer], _STAGES)):
                mid_channels, out_channels, stride, dilate = stage
                setattr(self, f'res{k + 2}', resnet_blocks.ResBlock(
                    n_block, in_channels, mid_channels, out_channels, stride,
                    dilate=dilate, **kwargs))
                in_channels = out_channels
