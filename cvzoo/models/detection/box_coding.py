"""Box <-> offset coding of the anchor-based detectors, and the y/x swap of ChainerCV heads.

A box is (x_min, y_min, x_max, y_max); its offset ``loc`` to a reference box ``src``
(an anchor or a RoI) of centre (x_src, y_src) and size (w_src, h_src) is ``(dx, dy, dw,
dh)``, x first as every cvzoo box, with weights (wx, wy, ww, wh):

    dx = wx (x - x_src) / w_src     dw = ww log(w / w_src)
    dy = wy (y - y_src) / h_src     dh = wh log(h / h_src)

with (x, y) the centre and (w, h) the size (no "+ 1"). This is R-CNN's coding (Girshick
et al., CVPR 2014, appendix C) as ChainerCV's ``bbox2loc``/``loc2bbox`` (weights 1;
Faster R-CNN applies its ``loc_normalize_std`` outside) and torchvision's ``BoxCoder``
(weights (1, 1, 1, 1) for RetinaNet and the RPN, (10, 10, 5, 5) for Faster R-CNN's head)
write it. The origins differ in two places, chosen per caller:

- ``encode(..., eps=...)``: ChainerCV floors the sizes at the dtype's eps (cvzoo's
  Faster R-CNN floors the target's too), torchvision does not (``eps=None``);
- ``decode(..., exp_clip=...)``: dw and dh are clipped at ``EXP_CLIP`` before exp() by
  torchvision and ChainerCV's FPN, not by ChainerCV's VGG16 model (``exp_clip=None``).

ChainerCV orders boxes and offsets y first; :func:`swap_xy_channels` permutes its
weights when converted.
"""

import math

import numpy

from cvzoo.core import backend

UNIT_WEIGHTS = (1.0, 1.0, 1.0, 1.0)
# NOTE: Detectron's bbox_xform_clip: exp() of a larger dw/dh would overflow for garbage
# offsets.
EXP_CLIP = math.log(1000.0 / 16)
# the value of ``eps`` that floors at the boxes' dtype's machine epsilon
DTYPE_EPS = 'dtype'


def _centre_size(bbox):
    size = bbox[..., 2:] - bbox[..., :2]
    return bbox[..., :2] + size * bbox.dtype.type(0.5), size


def encode(src_bbox, dst_bbox, weights=UNIT_WEIGHTS, eps=None):
    """Offsets that take each reference box to its target box.

    Args:
        src_bbox (array): (..., 4) float reference boxes (anchors, RoIs).
        dst_bbox (array): (..., 4) target boxes, same shape.
        weights (tuple of float): (wx, wy, ww, wh).
        eps (None or 'dtype'): ``'dtype'`` floors both boxes' widths and heights at the
            dtype's machine epsilon (cvzoo's Faster R-CNN, after ChainerCV), so that
            degenerate boxes give finite offsets; None leaves them (torchvision).

    Returns:
        array: (..., 4) offsets (dx, dy, dw, dh), src_bbox's dtype.

    >>> encode(numpy.array([[0., 0, 10, 10]]), numpy.array([[5., 0, 15, 20]]))
    array([[0.5       , 0.5       , 0.        , 0.69314718]])
    """
    if eps not in (None, DTYPE_EPS):
        raise ValueError(f"eps: expected None or 'dtype', got {eps!r}")
    xp = backend.get_array_module(src_bbox, dst_bbox)
    centre, size = _centre_size(src_bbox)
    dst_centre, dst_size = _centre_size(dst_bbox.astype(src_bbox.dtype, copy=False))
    if eps is not None:
        floor = numpy.finfo(src_bbox.dtype).eps
        size, dst_size = xp.maximum(size, floor), xp.maximum(dst_size, floor)
    weight = xp.asarray(weights, src_bbox.dtype)
    offset = weight[:2] * (dst_centre - centre) / size
    scale = weight[2:] * xp.log(dst_size / size)
    return xp.concatenate((offset, scale), axis=-1)


def decode(src_bbox, loc, weights=UNIT_WEIGHTS, exp_clip=None):
    """Boxes that offsets ``loc`` encode relative to ``src_bbox`` (the inverse of encode).

    Args:
        src_bbox (array): (..., 4) float reference boxes, broadcastable with loc.
        loc (array): (..., 4) offsets (dx, dy, dw, dh).
        weights (tuple of float): (wx, wy, ww, wh).
        exp_clip (float or None): upper bound of dw / ww and dh / wh before exp()
            (``EXP_CLIP`` for torchvision and ChainerCV's FPN; None for none).

    Returns:
        array: boxes (x_min, y_min, x_max, y_max) of the broadcast shape, loc's dtype.

    >>> decode(numpy.array([[0., 0, 10, 10]]), numpy.array([[0.5, 0.5, 0, math.log(2)]]))
    array([[ 5.,  0., 15., 20.]])
    """
    xp = backend.get_array_module(src_bbox, loc)
    dtype = loc.dtype
    centre, size = _centre_size(src_bbox.astype(dtype, copy=False))
    weight = xp.asarray(weights, dtype)
    offset = loc[..., :2] / weight[:2]
    scale = loc[..., 2:] / weight[2:]
    if exp_clip is not None:
        scale = xp.minimum(scale, dtype.type(exp_clip))
    pred_centre = offset * size + centre
    half = xp.exp(scale) * size * dtype.type(0.5)
    return xp.concatenate((pred_centre - half, pred_centre + half), axis=-1)


def swap_xy_channels(array, n_entry=4):
    """Permute offset channels (n * n_entry, ...) whose first four of each group are
    (dy, dx, dh, dw), ChainerCV's order, to (dx, dy, dw, dh), cvzoo's; the rest of a
    group stays.

    The permutation is its own inverse, so it also maps cvzoo's order to ChainerCV's.

    >>> swap_xy_channels(numpy.arange(8)).tolist()
    [1, 0, 3, 2, 5, 4, 7, 6]
    """
    order = numpy.arange(n_entry)
    order[:4] = [1, 0, 3, 2]
    grouped = numpy.asarray(array).reshape((-1, n_entry) + array.shape[1:])
    return numpy.ascontiguousarray(grouped[:, order]).reshape(array.shape)
