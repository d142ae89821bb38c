"""The ``[reorg]`` section: Darknet's stride-s space-to-depth, with its index quirk.

YOLOv2 (YOLO9000, Redmon and Farhadi, CVPR 2017, section 2 "Fine-Grained Features")
passes the 26x26 features to the 13x13 head through this layer. The weights of
pjreddie's Darknet were trained with its ``reorg_cpu`` (blas.c) called with
``forward=0`` on the layer's *input* sizes (w, h, c). For output flat index
``i + w * (j + h * k)`` (read as a (c, h, w) array; the real output is
(c * s^2, h / s, w / s)) it reads the input flat index
``w2 + w * s * (h2 + h * s * c2)`` with ``c2 = k % (c / s^2)``, ``offset = k // (c / s^2)``,
``w2 = i * s + offset % s`` and ``h2 = j * s + offset // s``. That is not a plain
space-to-depth: the input is read as if it had c / s^2 channels of (h * s, w * s)
pixels. In array terms: reshape (B, C, H, W) to (B, C / s^2, H, s, W, s), move the two
s axes to the front of the channels, reshape to (B, C * s^2, H / s, W / s). ChainerCV's
YOLOv2 does the same (its converted weights need it). AlexeyAB's fork fixed ``[reorg]``
into a plain space-to-depth and keeps this one as ``[reorg_old]``.
"""

import dataclasses

import cvzoo.core.functions as F
from cvzoo import errors


def darknet_reorg(x, stride=2):
    """Darknet's ``[reorg]`` forward (see the module docstring for the index rule).

    Args:
        x (Variable or array): (B, C, H, W), C divisible by ``stride ** 2`` and H, W by
            ``stride``.
        stride (int): s >= 1.

    Returns:
        Variable: (B, C * s^2, H / s, W / s), of x's dtype; differentiable (reshape and
        transpose only).

    Raises:
        ValueError: sizes that the stride does not divide.

    >>> import numpy as np
    >>> darknet_reorg(np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)).shape
    (1, 16, 1, 1)
    """
    B, C, H, W = x.shape
    s = int(stride)
    if s < 1 or C % (s * s) or H % s or W % s:
        raise ValueError(f'x: [reorg] with stride {s} needs channels divisible by {s * s} '
                         f'and height, width divisible by {s}, got shape {tuple(x.shape)}')
    h = F.reshape(x, (B, C // (s * s), H, s, W, s))
    h = F.transpose(h, (0, 3, 5, 1, 2, 4))
    return F.reshape(h, (B, C * s * s, H // s, W // s))


@dataclasses.dataclass
class ReorgLayer:
    """A parameter-free ``[reorg]`` layer of a CfgNetwork, called as ``layer(x, outputs)``."""

    stride: int = 2

    def __call__(self, x, outputs):
        return darknet_reorg(x, self.stride)


def build_reorg(options, index, channels):
    """ReorgLayer of a ``[reorg]`` section and its output channels.

    Only the plain form is supported: ``reverse``, ``flatten`` and ``extra`` must be 0.

    Raises:
        cvzoo.errors.CorruptFileError: another form, a stride < 1, or input channels
            that ``stride ** 2`` does not divide; the message names the layer index.
    """
    where = f'[reorg] (layer {index})'
    stride = int(options.get('stride', 1))
    for key in ('reverse', 'flatten', 'extra'):
        if int(options.get(key, 0)):
            raise errors.CorruptFileError(f'{where}: {key}={options[key]} is not supported')
    in_channels = channels[index - 1]
    if stride < 1 or in_channels % (stride * stride):
        raise errors.CorruptFileError(f'{where}: stride={stride} does not fit '
                                      f'{in_channels} input channels')
    return ReorgLayer(stride), in_channels * stride * stride
