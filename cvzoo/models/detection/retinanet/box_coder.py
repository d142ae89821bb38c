"""torchvision's box coder (``BoxCoder``) with RetinaNet's weights (1, 1, 1, 1).

An offset (dx, dy, dw, dh) of an anchor of centre (x, y) and size (w, h) (widths are
``x_max - x_min``, no +1) encodes the box of centre ``(x + dx w / wx, y + dy h / wy)``
and size ``(w exp(dw / ww), h exp(dh / wh))``; dw and dh are clipped at
``log(1000 / 16)`` before the exponential when decoding.
"""

import math

import numpy  # noqa: F401 - the doctests use it

from cvzoo.core import backend

WEIGHTS = (1.0, 1.0, 1.0, 1.0)
EXP_CLIP = math.log(1000.0 / 16)


def _centre_size(bbox):
    size = bbox[..., 2:] - bbox[..., :2]
    return bbox[..., :2] + size * bbox.dtype.type(0.5), size


def encode(anchor, bbox, weights=WEIGHTS):
    """Offsets that take each anchor to its box.

    Args:
        anchor (array): (..., 4) float anchors, (x_min, y_min, x_max, y_max).
        bbox (array): (..., 4) target boxes, same shape and dtype.
        weights (tuple of float): (wx, wy, ww, wh).

    Returns:
        array: (..., 4) offsets (dx, dy, dw, dh), anchor's dtype.

    >>> encode(numpy.array([[0., 0, 10, 10]]), numpy.array([[5., 0, 15, 20]]))
    array([[0.5       , 0.5       , 0.        , 0.69314718]])
    """
    xp = backend.get_array_module(anchor, bbox)
    centre, size = _centre_size(anchor)
    gt_centre, gt_size = _centre_size(bbox.astype(anchor.dtype, copy=False))
    weight = xp.asarray(weights, anchor.dtype)
    offset = weight[:2] * (gt_centre - centre) / size
    scale = weight[2:] * xp.log(gt_size / size)
    return xp.concatenate((offset, scale), axis=-1)


def decode(anchor, loc, weights=WEIGHTS, exp_clip=EXP_CLIP):
    """Boxes that offsets ``loc`` encode relative to ``anchor`` (the inverse of encode).

    Args:
        anchor (array): (..., 4) float anchors.
        loc (array): (..., 4) offsets (dx, dy, dw, dh), broadcastable with anchor.
        weights (tuple of float): (wx, wy, ww, wh).
        exp_clip (float): upper bound of dw / ww and dh / wh before the exponential.

    Returns:
        array: (..., 4) boxes (x_min, y_min, x_max, y_max), loc's dtype.

    >>> decode(numpy.array([[0., 0, 10, 10]]), numpy.array([[0.5, 0.5, 0, math.log(2)]]))
    array([[ 5.,  0., 15., 20.]])
    """
    xp = backend.get_array_module(anchor, loc)
    dtype = loc.dtype
    centre, size = _centre_size(anchor.astype(dtype, copy=False))
    weight = xp.asarray(weights, dtype)
    offset = loc[..., :2] / weight[:2]
    scale = xp.minimum(loc[..., 2:] / weight[2:], dtype.type(exp_clip))
    pred_centre = offset * size + centre
    half = xp.exp(scale) * size * dtype.type(0.5)
    return xp.concatenate((pred_centre - half, pred_centre + half), axis=-1)
