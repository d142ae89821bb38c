"""Anchor boxes of Faster R-CNN's RPN (Ren et al., NeurIPS 2015, section 3.1.1) and FPN's.

Anchors are (x_min, y_min, x_max, y_max) in input pixels, ordered as the RPN heads'
outputs after a (B, C, H, W) -> (B, H, W, C) transpose: row-major over the feature
map's cells, then the anchors of a cell.
"""

import numpy

from cvzoo.core import backend


def generate_anchor_base(base_size=16, ratios=(0.5, 1, 2), anchor_scales=(8, 16, 32)):
    """The anchors of one cell, centred on (base_size / 2, base_size / 2).

    For each ratio r (= height / width) and scale s, in that order (ratio-major as
    ChainerCV), a box of height ``base_size * s * sqrt(r)`` and width
    ``base_size * s / sqrt(r)``.

    Returns:
        numpy.ndarray: (len(ratios) * len(anchor_scales), 4) float32.

    >>> generate_anchor_base(16, (1,), (2,))
    array([[-8., -8., 24., 24.]], dtype=float32)
    """
    ratio = numpy.asarray(ratios, numpy.float64)[:, None]
    scale = numpy.asarray(anchor_scales, numpy.float64)[None, :]
    H = (base_size * scale * numpy.sqrt(ratio)).ravel()
    W = (base_size * scale * numpy.sqrt(1.0 / ratio)).ravel()
    centre = base_size / 2.0
    anchor = numpy.stack((centre - W / 2, centre - H / 2, centre + W / 2, centre + H / 2), 1)
    return anchor.astype(numpy.float32)


def enumerate_shifted_anchor(anchor_base, feat_stride, H, W):
    """Shift ``anchor_base`` to every cell of an (H, W) map of stride ``feat_stride``.

    Args:
        anchor_base (array): (A, 4) float32 anchors of the cell at the origin.
        feat_stride (int): input pixels per feature-map cell.
        H, W (int): the feature map's size.

    Returns:
        array: (H * W * A, 4) float32, on anchor_base's device.
    """
    xp = backend.get_array_module(anchor_base)
    shift_y, shift_x = xp.meshgrid(xp.arange(H) * feat_stride, xp.arange(W) * feat_stride,
                                   indexing='ij')
    shift = xp.stack((shift_x.ravel(), shift_y.ravel()) * 2, axis=1).astype(numpy.float32)
    return (shift[:, None, :] + anchor_base[None]).reshape(-1, 4)


def fpn_level_anchors(xp, size, scale, anchor_size, ratios=(0.5, 1, 2)):
    """The anchors of one FPN level, as ChainerCV's FPN computes them.

    At a level of ``scale`` (feature pixels per input pixel) a cell is ``1 / scale``
    input pixels wide; each cell holds one anchor per ratio r = height / width, of width
    ``round(1 / (scale * sqrt(r))) * anchor_size * scale`` and height
    ``round(that rounded factor * r) * anchor_size * scale``, centred on the cell's
    centre. (The rounding keeps ChainerCV's COCO weights' anchors exactly.)

    Args:
        xp: the array module.
        size (tuple of int): (H, W) of the level's map.
        scale (float): 1/4, 1/8, ...
        anchor_size (float): anchor side at ratio 1 (32 at 1/4, doubling per level).
        ratios (tuple of float): height / width ratios.

    Returns:
        array: (H * W * len(ratios), 4) float32.

    >>> fpn_level_anchors(numpy, (1, 1), 1 / 4, 32, (1,))
    array([[-14., -14.,  18.,  18.]], dtype=float32)
    """
    H, W = size
    ratio = numpy.asarray(ratios, numpy.float64)
    w_factor = numpy.round(1 / numpy.sqrt(ratio) / scale)
    half = numpy.stack((w_factor, numpy.round(w_factor * ratio)), 1) * anchor_size * scale / 2
    y, x = numpy.meshgrid(numpy.arange(H), numpy.arange(W), indexing='ij')
    centre = (numpy.stack((x.ravel(), y.ravel()), 1) + 0.5) / scale
    anchor = numpy.concatenate((centre[:, None] - half, centre[:, None] + half), axis=2)
    return xp.asarray(anchor.reshape(-1, 4), dtype=numpy.float32)
