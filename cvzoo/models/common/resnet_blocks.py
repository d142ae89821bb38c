"""The bottleneck block of ResNet, ResNeXt and SENet, and the stage of several blocks.

Parameter names follow ChainerCV (``res2/a/conv1/conv/W``, ``res2/a/residual_conv/bn/...``,
``res2/b1/se/down/W``) so that the ChainerCV name mapping is the identity.
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import parallel
from cvzoo.core.config import config
from cvzoo.core.functions.activation import relu as relu_module
from cvzoo.core.variable import as_array
from cvzoo.models.common import se_block
from cvzoo.models.common.pickable_sequential_chain import PickableSequentialChain


class Bottleneck(L.Chain):
    """1x1 -> 3x3 -> 1x1 convolutions (each with BN) plus a shortcut, then ReLU.

    Args:
        in_channels (int or None): input channels (None: inferred).
        mid_channels (int): channels of the 3x3 convolution.
        out_channels (int): output channels.
        stride (int): stride of the block.
        dilate (int): dilation of the 3x3 convolution (its pad equals it).
        groups (int): groups of the 3x3 convolution (32 for ResNeXt).
        initialW: initializer of the convolution kernels.
        bn_kwargs (dict or None): arguments of each BatchNormalization (e.g. ``eps``).
        residual_conv (bool): project the shortcut by a strided 1x1 convolution with BN.
        stride_first (bool): put the stride in the first 1x1 convolution (the original
            Caffe ResNet, ``arch='he'``) instead of the 3x3 one (``arch='fb'``).
        add_seblock (bool): gate the residual branch by an SEBlock (SENet).
    """

    def __init__(self, in_channels, mid_channels, out_channels, stride=1, *, dilate=1,
                 groups=1, initialW=None, bn_kwargs=None, residual_conv=False,
                 stride_first=False, add_seblock=False):
        super().__init__()
        first_stride, second_stride = (stride, 1) if stride_first else (1, stride)
        common = {'nobias': True, 'initialW': initialW, 'bn_kwargs': bn_kwargs}
        with self.init_scope():
            self.conv1 = L.Conv2DBNActiv(in_channels, mid_channels, 1, first_stride, 0,
                                         **common)
            self.conv2 = L.Conv2DBNActiv(mid_channels, mid_channels, 3, second_stride, dilate,
                                         dilate=dilate, groups=groups, **common)
            self.conv3 = L.Conv2DBNActiv(mid_channels, out_channels, 1, 1, 0, activ=None,
                                         **common)
            if add_seblock:
                self.se = se_block.SEBlock(out_channels)
            if residual_conv:
                self.residual_conv = L.Conv2DBNActiv(in_channels, out_channels, 1, stride, 0,
                                                     activ=None, **common)

    def forward(self, x):
        """Apply the block to ``x`` (B, in_channels, H, W)."""
        h = self.conv3(self.conv2(self.conv1(x)))
        if hasattr(self, 'se'):
            h = self.se(h)
        shortcut = self.residual_conv(x) if hasattr(self, 'residual_conv') else x
        if _may_write_in_place(h, shortcut):
            _add_relu_in_place(h.array, as_array(shortcut))
            return h
        if h.shape == shortcut.shape and h.dtype == shortcut.dtype:
            return relu_module.add_relu(h, shortcut)
        return F.relu(h + shortcut)


def _may_write_in_place(h, shortcut):
    """Whether relu(h + shortcut) may be written into h's array.

    That needs inference without a graph: h is then a new array that only this block
    holds (the output of conv3 or of the SE gate), on NumPy, of the shortcut's shape
    and dtype.
    """
    shortcut = as_array(shortcut)
    return (not config.enable_backprop and type(h.array) is numpy.ndarray
            and type(shortcut) is numpy.ndarray and h.shape == shortcut.shape
            and h.dtype == shortcut.dtype)


def _add_relu_in_place(h, shortcut):
    # NOTE: one pass per slice instead of two new arrays (measured: 3% of a ResNet-50
    # forward at batch 8); the same arithmetic, so the same result.
    def add_relu(h, shortcut):
        numpy.add(h, shortcut, out=h)
        numpy.maximum(h, h.dtype.type(0), out=h)

    parallel.elementwise(add_relu, h, shortcut)


class ResBlock(PickableSequentialChain):
    """One stage: a projecting Bottleneck ``a``, then ``b1`` ... ``b{n_layer-1}``.

    Args:
        n_layer (int): number of bottlenecks.
        in_channels, mid_channels, out_channels (int): as in Bottleneck.
        stride (int): stride of the first bottleneck.
        **kwargs: ``dilate``, ``groups``, ``initialW``, ``bn_kwargs``, ``stride_first``
            and ``add_seblock`` of Bottleneck (``stride_first`` matters only for ``a``).
    """

    def __init__(self, n_layer, in_channels, mid_channels, out_channels, stride, **kwargs):
        super().__init__()
        with self.init_scope():
            self.a = Bottleneck(in_channels, mid_channels, out_channels, stride,
                                residual_conv=True, **kwargs)
            for i in range(1, n_layer):
                setattr(self, f'b{i}', Bottleneck(out_channels, mid_channels, out_channels,
                                                  **kwargs))
