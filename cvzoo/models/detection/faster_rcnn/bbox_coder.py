"""Box <-> offset coding of Faster R-CNN (Girshick et al., R-CNN, CVPR 2014, appendix C).

A box is (x_min, y_min, x_max, y_max); its offset ``loc`` to a reference box ``src``
(an anchor or a RoI) is ``(dx, dy, dw, dh)``, x first as every cvzoo box:

    dx = (x - x_src) / w_src     dw = log(w / w_src)
    dy = (y - y_src) / h_src     dh = log(h / h_src)

with (x, y) the centre and (w, h) the size (no "+ 1", as ChainerCV). ChainerCV orders
both boxes and offsets y first; its weights are permuted when converted.
"""

import math

import numpy

from cvzoo.core import backend

# NOTE: Detectron's bbox_xform_clip: exp() of a larger dw/dh would overflow for garbage
# offsets; ChainerCV's FPN clips there too (its VGG16 model does not: pass None).
EXP_CLIP = math.log(1000.0 / 16)


def loc2bbox(src_bbox, loc, exp_clip=None):
    """Decode offsets ``loc`` against reference boxes ``src_bbox``.

    Args:
        src_bbox (array): (R, 4) or broadcastable to loc, float, (x_min, y_min, x_max,
            y_max).
        loc (array): (..., R, 4) float, (dx, dy, dw, dh).
        exp_clip (float or None): upper bound of dw and dh before exp().

    Returns:
        array: boxes of loc's shape and dtype, (x_min, y_min, x_max, y_max).

    >>> loc2bbox(numpy.array([[0., 0., 10., 20.]]), numpy.array([[0.1, 0., 0., 0.]]))
    array([[ 1.,  0., 11., 20.]])
    """
    xp = backend.get_array_module(src_bbox, loc)
    src_bbox = src_bbox.astype(loc.dtype, copy=False)
    size = src_bbox[..., 2:] - src_bbox[..., :2]
    centre = src_bbox[..., :2] + 0.5 * size
    log_scale = loc[..., 2:] if exp_clip is None else xp.minimum(loc[..., 2:], exp_clip)
    centre = loc[..., :2] * size + centre
    half = 0.5 * xp.exp(log_scale) * size
    return xp.concatenate((centre - half, centre + half), axis=-1)


def bbox2loc(src_bbox, dst_bbox):
    """Encode ``dst_bbox`` as offsets to ``src_bbox`` (the inverse of :func:`loc2bbox`).

    Args:
        src_bbox (array): (R, 4) float reference boxes, non-empty.
        dst_bbox (array): (R, 4) float target boxes, non-empty.

    Returns:
        array: (R, 4) (dx, dy, dw, dh), src_bbox's dtype.

    >>> bbox2loc(numpy.array([[0., 0., 10., 20.]]), numpy.array([[1., 0., 11., 20.]]))
    array([[0.1, 0. , 0. , 0. ]])
    """
    xp = backend.get_array_module(src_bbox, dst_bbox)
    dst_bbox = dst_bbox.astype(src_bbox.dtype, copy=False)
    src_size = src_bbox[:, 2:] - src_bbox[:, :2]
    src_centre = src_bbox[:, :2] + 0.5 * src_size
    dst_size = dst_bbox[:, 2:] - dst_bbox[:, :2]
    dst_centre = dst_bbox[:, :2] + 0.5 * dst_size
    # NOTE: a tiny floor keeps degenerate boxes finite (ChainerCV uses the dtype's eps).
    eps = numpy.finfo(src_bbox.dtype).eps
    src_size = xp.maximum(src_size, eps)
    offset = (dst_centre - src_centre) / src_size
    log_scale = xp.log(xp.maximum(dst_size, eps) / src_size)
    return xp.concatenate((offset, log_scale), axis=1)
