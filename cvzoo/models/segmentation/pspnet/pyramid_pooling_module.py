"""PyramidPoolingModule: PSPNet's pooling of the features over 1x1 .. 6x6 bins."""

import cvzoo.core.functions as F
import cvzoo.core.links as L

PYRAMIDS = (6, 3, 2, 1)


class PyramidPoolingModule(L.ChainList):
    """Average-pool the features into bins, reduce, upsample and concatenate (Sec. 3.3).

    For each pyramid level p the features are average-pooled with a window of
    ``feat_size // p`` (and the same stride), reduced to ``in_channels / len(pyramids)``
    channels by a 1x1 Conv2DBNActiv and resized back bilinearly (corners aligned); the
    result is the input and the four branches concatenated.

    NOTE: as in ChainerCV, the windows come from ``feat_size`` (input size // 8, fixed
    at construction), not from the size of each input's features: 713 // 8 = 89 while
    the features are 90 wide, and the pooled grids are still 6, 3, 2 and 1 bins.

    Args:
        in_channels (int): channels of the features (2048).
        feat_size (tuple of int): (H, W) the windows are computed from.
        pyramids (tuple of int): bins per side of each branch.
        initialW: initializer of the 1x1 convolutions.

    Children ``0`` .. ``3`` (Conv2DBNActiv), ChainerCV's ``ppm/0`` .. ``ppm/3``.
    """

    def __init__(self, in_channels, feat_size, pyramids=PYRAMIDS, initialW=None):
        super().__init__()
        out_channels = in_channels // len(pyramids)
        for _ in pyramids:
            self.append(L.Conv2DBNActiv(in_channels, out_channels, 1, 1, 0,
                                        initialW=initialW))
        self.ksizes = []
        for p in pyramids:
            ksize = (feat_size[0] // p, feat_size[1] // p)
            if min(ksize) < 1:
                raise ValueError(f'feat_size: expected at least {p} per side for the {p}x{p} '
                                 f'pyramid level, got {tuple(feat_size)}')
            self.ksizes.append(ksize)

    def forward(self, x):
        """(B, C, H, W) features -> (B, 2C, H, W)."""
        size = x.shape[2:]
        ys = [x]
        for branch, ksize in zip(self, self.ksizes):
            y = branch(F.average_pooling_2d(x, ksize, ksize))
            ys.append(F.resize_images(y, size, align_corners=True))
        return F.concat(ys, axis=1)
