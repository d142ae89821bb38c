"""Resize instance masks (or label maps) with nearest-neighbour sampling."""

import numpy


def resize_mask(mask, size):
    """Resize (R, H, W) masks or label maps to ``size`` = (out_H, out_W), nearest neighbour.

    Output pixel centres are mapped onto the input grid, as Pillow's NEAREST does, so
    class ids and mask values are never blended.

    Args:
        mask (numpy.ndarray): (R, H, W), any dtype (bool masks, int labels).
        size (tuple of int): (out_H, out_W).

    Returns:
        numpy.ndarray: (R, out_H, out_W) of mask's dtype.

    >>> resize_mask(numpy.array([[[1, 2], [3, 4]]]), (4, 4))[0]
    array([[1, 1, 2, 2],
           [1, 1, 2, 2],
           [3, 3, 4, 4],
           [3, 3, 4, 4]])
    """
    H, W = mask.shape[1:]
    out_H, out_W = size
    rows = numpy.minimum(((numpy.arange(out_H) + 0.5) * H / out_H).astype(numpy.int64), H - 1)
    columns = numpy.minimum(((numpy.arange(out_W) + 0.5) * W / out_W).astype(numpy.int64),
                            W - 1)
    return mask[:, rows[:, None], columns[None, :]]
