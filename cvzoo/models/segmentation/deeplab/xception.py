"""Xception-65 as DeepLab V3+ modifies it: separable convolutions throughout, atrous
rates instead of the last strides (output stride 8), as in ChainerCV's ``Xception65``."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.segmentation.deeplab.separable_conv_2d_bn_activ import SeparableConv2DBNActiv

SKIP_TYPES = ('conv', 'sum', 'none')
N_MIDDLE_BLOCK = 16


class XceptionBlock(L.Chain):
    """Three 3x3 separable convolutions with a skip connection.

    Args:
        in_channels (int): input channels.
        depthlist (tuple of 3 int): output channels of the three separable convolutions.
        stride (int): stride of the third one (and of the skip convolution).
        dilate (int): atrous rate (and padding) of the three.
        skip_type (str): ``'conv'`` (a strided 1x1 Conv2DBNActiv without activation),
            ``'sum'`` (the input itself) or ``'none'``.
        activ_first (bool): ReLU on the input (else ReLU on the output).
        bn_kwargs (dict or None): arguments of every BatchNormalization.
        dw_activ_list, pw_activ_list (tuple of 3): activations after the depthwise and
            the pointwise part of each separable convolution; the second pointwise one
            is applied after the block's second output is taken.
        initialW: initializer of the convolutions.

    ``forward`` returns ``(h, separable2)``: the block's output and the second separable
    convolution's output before its pointwise activation (DeepLab's low-level feature).
    """

    def __init__(self, in_channels, depthlist, stride=1, dilate=1, *, skip_type='conv',
                 activ_first=True, bn_kwargs=None, dw_activ_list=(None, None, None),
                 pw_activ_list=(F.relu, F.relu, None), initialW=None):
        super().__init__()
        if skip_type not in SKIP_TYPES:
            raise ValueError(f'skip_type: expected one of {SKIP_TYPES}, got {skip_type!r}')
        self.skip_type, self.activ_first = skip_type, activ_first
        self.separable2_activ = pw_activ_list[1]
        channels = (in_channels,) + tuple(depthlist)
        pw_activs = (pw_activ_list[0], None, pw_activ_list[2])
        common = {'bn_kwargs': bn_kwargs, 'initialW': initialW}
        with self.init_scope():
            for k in range(3):
                setattr(self, f'separable{k + 1}', SeparableConv2DBNActiv(
                    channels[k], channels[k + 1], 3, stride if k == 2 else 1, dilate, dilate,
                    dw_activ=dw_activ_list[k], pw_activ=pw_activs[k], **common))
            if skip_type == 'conv':
                self.conv = L.Conv2DBNActiv(in_channels, depthlist[2], 1, stride, 0,
                                            activ=None, initialW=initialW,
                                            bn_kwargs=bn_kwargs)

    def forward(self, x):
        """(B, C, H, W) -> ``(h, separable2)``, see the class docstring."""
        h = F.relu(x) if self.activ_first else x
        separable2 = self.separable2(self.separable1(h))
        h = separable2 if self.separable2_activ is None else self.separable2_activ(separable2)
        h = self.separable3(h)
        if self.skip_type == 'conv':
            h = h + self.conv(x)
        elif self.skip_type == 'sum':
            h = h + x
        return (h if self.activ_first else F.relu(h)), separable2


class Xception65(L.Chain):
    """The backbone of DeepLab V3+ (Chen et al., ECCV 2018, Sec. 3.2; the TensorFlow
    release's ``xception_65``) at output stride 8: entry flow (two 3x3 convolutions and
    three blocks, the last one unstrided: stride 8 in all), 16 middle blocks with atrous
    rate 2 and 2 exit blocks with rates 2 and 4.

    Args:
        bn_kwargs (dict or None): arguments of every BatchNormalization (the converted
            TensorFlow weights use eps 1e-3).
        initialW: initializer of the convolutions.

    ``forward(x)`` returns ``(lowlevel, highlevel)``: (B, 256, H/4, W/4), the second
    separable convolution of ``entryflow_block2``, and (B, 2048, H/8, W/8) (sizes
    rounded up at each stride).
    """

    def __init__(self, bn_kwargs=None, initialW=None):
        super().__init__()
        common = {'bn_kwargs': bn_kwargs, 'initialW': initialW}
        relus = (F.relu, F.relu, F.relu)
        with self.init_scope():
            self.entryflow_conv1 = L.Conv2DBNActiv(3, 32, 3, 2, 1, initialW=initialW,
                                                   bn_kwargs=bn_kwargs)
            self.entryflow_conv2 = L.Conv2DBNActiv(32, 64, 3, 1, 1, initialW=initialW,
                                                   bn_kwargs=bn_kwargs)
            self.entryflow_block1 = XceptionBlock(64, (128, 128, 128), 2, **common)
            self.entryflow_block2 = XceptionBlock(128, (256, 256, 256), 2, **common)
            self.entryflow_block3 = XceptionBlock(256, (728, 728, 728), 1, **common)
            for k in range(1, N_MIDDLE_BLOCK + 1):
                setattr(self, f'middleflow_block{k}', XceptionBlock(
                    728, (728, 728, 728), 1, 2, skip_type='sum', **common))
            self.exitflow_block1 = XceptionBlock(728, (728, 1024, 1024), 1, 2, **common)
            self.exitflow_block2 = XceptionBlock(
                1024, (1536, 1536, 2048), 1, 4, skip_type='none', activ_first=False,
                dw_activ_list=relus, pw_activ_list=relus, **common)

    def forward(self, x):
        """(B, 3, H, W) images scaled to [-1, 1] -> ``(lowlevel, highlevel)``."""
        h = self.entryflow_conv2(self.entryflow_conv1(x))
        h, _ = self.entryflow_block1(h)
        h, lowlevel = self.entryflow_block2(h)
        h, _ = self.entryflow_block3(h)
        for k in range(1, N_MIDDLE_BLOCK + 1):
            h, _ = self[f'middleflow_block{k}'](h)
        h, _ = self.exitflow_block1(h)
        highlevel, _ = self.exitflow_block2(h)
        return lowlevel, highlevel
