"""Normalize: L2 normalisation over channels with a learned per-channel scale (SSD conv4_3)."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.core.variable import Parameter


class Normalize(L.Link):
    """``y = scale * x / (||x||_2 + eps)``, the norm taken over the channels of each pixel.

    Liu, Rabinovich and Berg, "ParseNet: Looking Wider to See Better", 2015; SSD applies
    it to conv4_3, whose activations are on another scale than the deeper maps'.

    Args:
        n_channel (int): channels of the input.
        initial (float or Initializer): initial scale (SSD: 20).
        eps (float): added to the norm.

    Attributes:
        scale (Parameter): (n_channel,) float32.
    """

    def __init__(self, n_channel, initial=20.0, eps=1e-5):
        super().__init__()
        self.eps = eps
        if not isinstance(initial, initializers.Initializer):
            initial = initializers.Constant(float(initial))
        with self.init_scope():
            self.scale = Parameter(initial, (n_channel,))

    def forward(self, x):
        """(B, C, H, W) -> (B, C, H, W) normalised and scaled."""
        # NOTE: not F.normalize: its sqrt has an infinite derivative where a pixel's
        # channels are all 0 (common after ReLU), which makes the gradient NaN. The 1e-20
        # under the root keeps it finite and moves the norm by at most 1e-10.
        squared = F.sum(x * x, axis=1, keepdims=True)
        norm = F.sqrt(squared + 1e-20) + self.eps
        h = x / F.broadcast_to(norm, x.shape)
        return h * F.broadcast_to(self.scale.reshape(1, -1, 1, 1), h.shape)
