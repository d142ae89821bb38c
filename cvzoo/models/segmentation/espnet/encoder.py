"""ESPNetEncoder: ESPNet-C, the encoder half of ESPNet, with its 1x1 classifier."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models.segmentation.espnet import blocks


class ESPNetEncoder(L.Chain):
    """The ESPNet-C encoder (Mehta et al., ECCV 2018, Fig. 4c).

    A strided CBR, then two levels each made of a strided ESP block and ``p`` (level 2)
    or ``q`` (level 3) residual ESP blocks. The input image, average-pooled to each
    level's size, is concatenated to the features ("input reinforcement").

    Args:
        n_out (int): channels of the 1x1 classifier.
        p, q (int): the number of ESP blocks at levels 2 and 3.

    Attributes:
        level1 (CBR), b1 (BR), level2_0 (StridedESPBlock), level2 (ChainList of
        ESPBlock), b2 (BR), level3_0 (StridedESPBlock), level3 (ChainList of ESPBlock),
        b3 (BR), classifier (L.Convolution2D, no bias).
    """

    def __init__(self, n_out, p=2, q=8):
        super().__init__()
        with self.init_scope():
            self.level1 = blocks.CBR(3, 16, 3, stride=2)
            self.b1 = blocks.BR(16 + 3)
            self.level2_0 = blocks.StridedESPBlock(16 + 3, 64)
            self.level2 = L.ChainList(*[blocks.ESPBlock(64, 64) for _ in range(p)])
            self.b2 = blocks.BR(128 + 3)
            self.level3_0 = blocks.StridedESPBlock(128 + 3, 128)
            self.level3 = L.ChainList(*[blocks.ESPBlock(128, 128) for _ in range(q)])
            self.b3 = blocks.BR(256)
            self.classifier = L.Convolution2D(256, n_out, 1, nobias=True)

    def forward(self, x):
        """Encode (B, 3, H, W) images.

        Returns:
            tuple of Variable: the level-1 features (B, 19, H/2, W/2), the level-2
            features (B, 131, H/4, W/4) and the classifier scores (B, n_out, H/8, W/8);
            each side is ceil'ed at each halving.
        """
        level1 = self.b1(F.concat([self.level1(x), blocks.input_projection(x, 1)]))
        down2 = self.level2_0(level1)
        h = down2
        for block in self.level2:
            h = block(h)
        level2 = self.b2(F.concat([h, down2, blocks.input_projection(x, 2)]))
        down3 = self.level3_0(level2)
        h = down3
        for block in self.level3:
            h = block(h)
        level3 = self.b3(F.concat([down3, h]))
        return level1, level2, self.classifier(level3)
