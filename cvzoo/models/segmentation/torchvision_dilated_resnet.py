"""DilatedResNet: the ResNet-50/101 trunk of torchvision's segmenters (output stride 8).

torchvision builds its FCN and DeepLabV3 backbones with
``replace_stride_with_dilation=[False, True, True]``: ``layer3`` and ``layer4`` keep the
resolution of ``layer2`` and dilate their 3x3 convolutions instead (Yu and Koltun, ICLR
2016; Chen et al., 2017, section 3.1). The first block of a dilated stage keeps the
previous stage's dilation; the others take the new one::

    res4: a dilate 1, b1.. dilate 2        res5: a dilate 2, b1.. dilate 4

Parameter names are those of :mod:`cvzoo.models.classification.resnet` (``conv1/conv``,
``res4/b3/conv2/bn``, ...), so its torchvision name mapping applies unchanged.
"""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.common import resnet_blocks
from cvzoo.models.common.pickable_sequential_chain import PickableSequentialChain

N_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}
BN_KWARGS = {'eps': 1e-5}  # torchvision's BatchNorm2d
# (stride, dilation of the first block, dilation of the others) of res2 .. res5
_STAGES = ((1, 1, 1), (2, 1, 1), (1, 1, 2), (1, 2, 4))


def dilated_stage(n_block, in_channels, mid_channels, out_channels, *, stride=1,
                  first_dilate=1, dilate=1, initialW=None):
    """One ResNet stage whose first block may dilate differently from the others.

    Returns:
        PickableSequentialChain: bottlenecks ``a`` (with the projecting shortcut),
        ``b1`` ... ``b{n_block - 1}``.
    """
    common = {'initialW': initialW, 'bn_kwargs': BN_KWARGS}
    stage = PickableSequentialChain()
    with stage.init_scope():
        stage.a = resnet_blocks.Bottleneck(in_channels, mid_channels, out_channels, stride,
                                           dilate=first_dilate, residual_conv=True, **common)
        for i in range(1, n_block):
            setattr(stage, f'b{i}', resnet_blocks.Bottleneck(
                out_channels, mid_channels, out_channels, dilate=dilate, **common))
    return stage


class DilatedResNet(PickableSequentialChain):
    """ResNet-50/101 with ``res4`` and ``res5`` dilated: both at 1/8 of the input.

    Layers: ``conv1`` (7x7 stride 2, BN, ReLU), ``pool1`` (3x3 stride 2 max pooling, pad
    1), ``res2`` (256 channels, 1/4), ``res3`` (512, 1/8), ``res4`` (1024, 1/8), ``res5``
    (2048, 1/8). ``pick`` defaults to ``('res4', 'res5')``: the auxiliary head's input
    and the main head's.

    Args:
        n_layer (int): 50 or 101.
        initialW: initializer of the convolutions.
    """

    def __init__(self, n_layer, initialW=None):
        super().__init__()
        if n_layer not in N_BLOCKS:
            raise ValueError(f'n_layer: expected one of {sorted(N_BLOCKS)}, got {n_layer!r}')
        with self.init_scope():
            self.conv1 = L.Conv2DBNActiv(3, 64, 7, 2, 3, initialW=initialW, bn_kwargs=BN_KWARGS)
            self.pool1 = functools.partial(F.max_pooling_2d, ksize=3, stride=2, pad=1,
                                           cover_all=False)
            in_channels = 64
            for k, (n_block, (stride, first, dilate)) in enumerate(
                    zip(N_BLOCKS[n_layer], _STAGES)):
                out_channels = 256 * 2 ** k
                setattr(self, f'res{k + 2}', dilated_stage(
                    n_block, in_channels, 64 * 2 ** k, out_channels, stride=stride,
                    first_dilate=first, dilate=dilate, initialW=initialW))
                in_channels = out_channels
        self.pick = ('res4', 'res5')
