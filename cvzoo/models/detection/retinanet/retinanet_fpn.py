"""RetinaNet's feature pyramid: FPN on C3 ... C5, plus P6 and P7 (Lin et al., ICCV 2017)."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.detection import fpn

SCALES = (1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128)


class RetinaNetFPN(fpn.FPN):
    """FPN (lateral 1x1, top-down nearest 2x, output 3x3; 256 channels) over a base's
    C3, C4 and C5, then ``p6`` (3x3, stride 2, on P5) and ``p7`` (3x3, stride 2, on
    ReLU(P6)), as torchvision's ``LastLevelP6P7(256, 256)`` of its v1 RetinaNet (the
    paper takes P6 from C5; torchvision's COCO weights take it from P5).

    Args:
        base (Link): (B, 3, H, W) -> C3, C4, C5.
        in_channels (sequence of int): channels of C3, C4, C5.
    """

    def __init__(self, base, in_channels=(512, 1024, 2048)):
        super().__init__(base, in_channels, SCALES[:3])
        # NOTE: variance 1 / fan_in, as torchvision's kaiming_uniform_(a=1) (normal here)
        init = {'initialW': initializers.LeCunNormal()}
        with self.init_scope():
            self.p6 = L.Convolution2D(256, 256, 3, 2, 1, **init)
            self.p7 = L.Convolution2D(256, 256, 3, 2, 1, **init)

    def forward(self, x):
        """(B, 3, H, W), H and W multiples of 32 -> P3 ... P7, (B, 256, ~H * s, ~W * s)."""
        hs = super().forward(x)
        p6 = self.p6(hs[-1])
        return hs + [p6, self.p7(F.relu(p6))]
