"""Multibox: SSD's loc and conf heads, one 3x3 convolution pair per feature map."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers


class Multibox(L.Chain):
    """Box regressions and class logits of every anchor of every feature map.

    Liu et al., "SSD: Single Shot MultiBox Detector", ECCV 2016, section 2.1. Map ``k``
    has ``2 + 2 len(aspect_ratios[k])`` anchors per location; its loc convolution gives
    4 numbers per anchor, ``(dx, dy, dw, dh)``, its conf convolution ``n_class`` logits.

    Args:
        n_class (int): classes including the background (class 0).
        aspect_ratios (sequence of sequence of number): per feature map.
        in_channels (sequence of int): channels of each feature map.
        initialW, initial_bias: initializers (default Glorot uniform and 0).

    Attributes:
        loc (ChainList): ``loc[k]`` a Convolution2D to ``n_anchor * 4`` channels.
        conf (ChainList): ``conf[k]`` a Convolution2D to ``n_anchor * n_class`` channels.
    """

    def __init__(self, n_class, aspect_ratios, in_channels, *, initialW=None,
                 initial_bias=None):
        super().__init__()
        if len(in_channels) != len(aspect_ratios):
            raise ValueError(f'in_channels: expected {len(aspect_ratios)} entries (one per '
                             f'aspect_ratios entry), got {len(in_channels)}')
        self.n_class = n_class
        self.aspect_ratios = tuple(tuple(ratios) for ratios in aspect_ratios)
        init = {'initialW': initialW or initializers.GlorotUniform(),
                'initial_bias': initial_bias or initializers.Zero()}
        with self.init_scope():
            self.loc = L.ChainList()
            self.conf = L.ChainList()
        for ratios, channels in zip(self.aspect_ratios, in_channels):
            n_anchor = 2 + 2 * len(ratios)
            self.loc.append(L.Convolution2D(channels, n_anchor * 4, 3, 1, 1, **init))
            self.conf.append(L.Convolution2D(channels, n_anchor * n_class, 3, 1, 1, **init))

    def forward(self, xs):
        """Feature maps -> ``mb_locs`` (B, K, 4) and ``mb_confs`` (B, K, n_class)."""
        mb_locs, mb_confs = [], []
        for x, loc, conf in zip(xs, self.loc, self.conf):
            mb_locs.append(_flatten_anchors(loc(x), 4))
            mb_confs.append(_flatten_anchors(conf(x), self.n_class))
        return F.concat(mb_locs, axis=1), F.concat(mb_confs, axis=1)


def _flatten_anchors(h, width):
    """(B, n_anchor * width, H, W) -> (B, H * W * n_anchor, width), anchors innermost."""
    h = F.transpose(h, (0, 2, 3, 1))
    return F.reshape(h, (h.shape[0], -1, width))
