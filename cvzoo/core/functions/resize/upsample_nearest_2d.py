"""upsample_nearest_2d: repeat each pixel scale times along height and width."""

from cvzoo.core.functions.array import broadcast, reshape
from cvzoo.core.functions.pooling import window_2d


def upsample_nearest_2d(x, scale):
    """Nearest-neighbour upsampling by an integer factor (each pixel becomes a block).

    Not a Chainer function (Chainer writes it ``unpooling_2d(x, scale, cover_all=False)``,
    which gives the same result); this one is a reshape, a broadcast and a reshape, and
    its gradient sums each block. Equal to torch's
    ``F.interpolate(x, scale_factor=scale, mode='nearest')``. Supports double backprop.

    Args:
        x (Variable or array): (N, C, H, W).
        scale (int or pair of int): factor (sy, sx) >= 1.

    Returns:
        Variable: (N, C, H * sy, W * sx), the dtype of x.

    >>> import numpy as np
    >>> upsample_nearest_2d(np.array([[[[1, 2]]]], dtype=np.float32), 2).array[0, 0]
    array([[1., 1., 2., 2.],
           [1., 1., 2., 2.]], dtype=float32)
    """
    sy, sx = window_2d.pair(scale, 'scale')
    if min(sy, sx) < 1:
        raise ValueError(f'upsample_nearest_2d: scale must be >= 1, got {scale!r}')
    if x.ndim != 4:
        raise ValueError(f'upsample_nearest_2d: x must be (N, C, H, W), got shape {x.shape}')
    n, c, h, w = x.shape
    blocks = broadcast.broadcast_to(reshape.reshape(x, (n, c, h, 1, w, 1)),
                                    (n, c, h, sy, w, sx))
    return reshape.reshape(blocks, (n, c, h * sy, w * sx))
