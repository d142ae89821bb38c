"""SEBlock: squeeze-and-excitation, a learnt per-channel gate (Hu et al., CVPR 2018)."""

import cvzoo.core.functions as F
import cvzoo.core.links as L


class SEBlock(L.Chain):
    """Scale each channel by a gate computed from the globally pooled feature map.

    ``u * sigmoid(up(relu(down(mean_hw(u)))))`` (the paper's section 3, Eq. 2-4).

    Args:
        n_channel (int): channels of the input and the output.
        ratio (int): reduction ratio; the hidden layer has ``n_channel // ratio`` units.

    Attributes:
        down, up (Linear): the two fully connected layers, named as in ChainerCV.
    """

    def __init__(self, n_channel, ratio=16):
        super().__init__()
        with self.init_scope():
            self.down = L.Linear(n_channel, n_channel // ratio)
            self.up = L.Linear(n_channel // ratio, n_channel)

    def forward(self, u):
        """Gate ``u`` (B, C, H, W) channel by channel; returns the same shape."""
        B, C = u.shape[:2]
        z = F.mean(u, axis=(2, 3))
        gate = F.sigmoid(self.up(F.relu(self.down(z))))
        return u * F.reshape(gate, (B, C, 1, 1))
