"""RetinaNet's anchors, as torchvision's ``AnchorGenerator`` lays them out.

Each of the five levels P3 ... P7 holds, per cell, nine anchors: the ratios
(h / w) 0.5, 1 and 2, each at three sizes ``int(s * 2 ** (k / 3))``, k = 0, 1, 2, with
s = 32, 64, 128, 256, 512 (Lin et al., ICCV 2017, section 4). The anchors of a cell are
ratio-major, then size, as the heads' channels; cells are row-major over the map. A
level's stride is ``padded input size // map size`` per axis (torchvision's integer
rule, so an odd P5 gives a P6 stride of e.g. 800 // 13 = 61, not 64); the anchor of
cell (i, j) is the cell-0 anchor shifted by (j * stride_x, i * stride_y).
"""

import numpy

ANCHOR_BASE_SIZES = (32, 64, 128, 256, 512)
ANCHOR_RATIOS = (0.5, 1.0, 2.0)
ANCHOR_SCALES = (1.0, 2 ** (1 / 3), 2 ** (2 / 3))


def level_sizes(base_size):
    """The three anchor sizes (side of the square anchor) of a level, torchvision's ints.

    >>> level_sizes(32)
    (32, 40, 50)
    """
    return tuple(int(base_size * scale) for scale in ANCHOR_SCALES)


def cell_anchors(sizes, ratios=ANCHOR_RATIOS):
    """The anchors of the cell at the origin, centred on (0, 0), rounded to integers.

    For ratio r and size s (ratio-major): width ``s / sqrt(r)``, height ``s * sqrt(r)``,
    computed in float32 and rounded half to even, as torchvision does.

    Args:
        sizes (sequence of int): anchor sizes of the level.
        ratios (sequence of float): height / width ratios.

    Returns:
        numpy.ndarray: (len(ratios) * len(sizes), 4) float32, (x_min, y_min, x_max, y_max).

    >>> cell_anchors((32,), (1.0,))
    array([[-16., -16.,  16.,  16.]], dtype=float32)
    """
    size = numpy.asarray(sizes, numpy.float32)
    h_ratio = numpy.sqrt(numpy.asarray(ratios, numpy.float32))
    w_ratio = numpy.float32(1) / h_ratio
    W = (w_ratio[:, None] * size[None, :]).ravel()
    H = (h_ratio[:, None] * size[None, :]).ravel()
    anchor = numpy.stack((-W, -H, W, H), axis=1) / numpy.float32(2)
    return numpy.round(anchor).astype(numpy.float32)


def level_anchors(xp, cell, grid_size, stride):
    """Shift ``cell`` anchors over a (H, W) map with (stride_y, stride_x).

    Returns:
        array: (H * W * A, 4) float32 on ``xp``'s device; row-major cells, then anchors.
    """
    H, W = grid_size
    shift_y = xp.arange(H, dtype=numpy.float32) * numpy.float32(stride[0])
    shift_x = xp.arange(W, dtype=numpy.float32) * numpy.float32(stride[1])
    shift_y, shift_x = xp.meshgrid(shift_y, shift_x, indexing='ij')
    shift = xp.stack((shift_x.ravel(), shift_y.ravel()) * 2, axis=1)
    return (shift[:, None, :] + xp.asarray(cell)[None]).reshape(-1, 4)


def retinanet_anchors(xp, img_size, grid_sizes, base_sizes=ANCHOR_BASE_SIZES):
    """The anchors of every level for a padded input of ``img_size``.

    Args:
        xp: the array module of the result.
        img_size (pair of int): (H, W) of the padded input batch.
        grid_sizes (sequence of pairs of int): (H_l, W_l) of each level's map.
        base_sizes (sequence of int): the base anchor size of each level.

    Returns:
        list of array: per level, (H_l * W_l * 9, 4) float32.

    >>> [a.shape for a in retinanet_anchors(numpy, (64, 64), [(8, 8), (4, 4)], (32, 64))]
    [(576, 4), (144, 4)]
    """
    if len(grid_sizes) != len(base_sizes):
        raise ValueError(f'grid_sizes: expected {len(base_sizes)} levels, got {len(grid_sizes)}')
    anchors = []
    for grid_size, base_size in zip(grid_sizes, base_sizes):
        stride = (img_size[0] // grid_size[0], img_size[1] // grid_size[1])
        anchors.append(level_anchors(xp, cell_anchors(level_sizes(base_size)), grid_size,
                                     stride))
    return anchors
