"""mask_targets: the M x M training targets of the mask head, cut from ground-truth masks.

ChainerCV's ``mask_to_segm`` (its Mask R-CNN training), batched: each RoI's box is
expanded by ``(M + 2) / M`` about its centre and rounded to integer pixels (the grid of
:func:`~cvzoo.models.instance_segmentation.mask_paste.paste_masks`, padded by one cell);
the ground-truth mask is cut to that box (zero outside the image), resized bilinearly
(OpenCV's rule) to ``M + 2`` cells, truncated to an integer (a cell is 1 only where every
sample it blends is inside the mask) and the pad cells are dropped.

A bilinear sample reads two rows and two columns, so the resize is two gathers: the two
rows of every output row of every RoI (R, M + 2, W), blended; then the two columns.
"""

import numpy

from cvzoo.core import backend
from cvzoo.models.instance_segmentation import mask_paste


def mask_targets(gt_masks, rois, index, segm_size, *, pad=1):
    """(R, M, M) float32 targets in {0, 1} of RoIs on their ground-truth masks.

    Args:
        gt_masks (array): (G, H, W) bool masks of one image.
        rois (array): (R, 4) float (x_min, y_min, x_max, y_max) in the masks' pixels.
        index (array): (R,) int, the mask of each RoI.
        segm_size (int): M.
        pad (int): cells of padding of the grid (1, as the paste).

    Returns:
        array: (R, M, M) float32 on ``gt_masks``' device.

    >>> gt = numpy.zeros((1, 8, 8), bool)
    >>> gt[0, 2:6, 2:6] = True
    >>> t = mask_targets(gt, numpy.array([[2, 2, 6, 6]], numpy.float32), numpy.zeros(1, int), 2)
    >>> t.tolist()
    [[[1.0, 1.0], [1.0, 1.0]]]
    """
    xp = backend.get_array_module(gt_masks)
    if getattr(gt_masks, 'ndim', None) != 3:
        raise ValueError(f'mask_targets: gt_masks: expected (G, H, W), got shape '
                         f'{getattr(gt_masks, "shape", None)}')
    if getattr(rois, 'ndim', None) != 2 or rois.shape[1:] != (4,) or \
            getattr(index, 'shape', None) != rois.shape[:1]:
        raise ValueError(f'mask_targets: rois, index: expected (R, 4) and (R,), got '
                         f'{getattr(rois, "shape", None)} and {getattr(index, "shape", None)}')
    _, H, W = gt_masks.shape
    S = segm_size + 2 * pad
    rois = backend.on_device_of(rois, gt_masks, numpy.float64)
    center = (rois[:, :2] + rois[:, 2:]) / 2
    half = (rois[:, 2:] - rois[:, :2]) / 2 * (S / segm_size)
    start = xp.round(center - half).astype(numpy.int64)
    length = xp.round(center + half).astype(numpy.int64) - start
    index = backend.on_device_of(index, gt_masks, numpy.int64)
    masks = gt_masks.astype(numpy.float32)
    y_low, y_high, w_y_low, w_y_high = _taps(xp, start[:, 1], length[:, 1], S, H)
    rows = (w_y_low[:, :, None] * masks[index[:, None], y_low]
            + w_y_high[:, :, None] * masks[index[:, None], y_high])          # (R, S, W)
    x_low, x_high, w_x_low, w_x_high = _taps(xp, start[:, 0], length[:, 0], S, W)
    picked = xp.arange(len(rois))[:, None, None], xp.arange(S)[None, :, None]
    segm = (w_x_low[:, None, :] * rows[picked + (x_low[:, None, :],)]
            + w_x_high[:, None, :] * rows[picked + (x_high[:, None, :],)])  # (R, S, S)
    # NOTE: the cut is empty when it misses the image (ChainerCV gives zeros then)
    empty = (length < 1).any(axis=1) | (start >= xp.asarray([W, H])).any(axis=1) | \
        (start + length <= 0).any(axis=1)
    segm = xp.floor(segm) * ~empty[:, None, None]
    return segm[:, pad:S - pad, pad:S - pad].astype(numpy.float32)


def _taps(xp, start, length, n_out, n_pixel):
    """Image pixels and weights of the bilinear samples of n_out cells over each box.

    Returns (R, n_out) low and high pixel indices (clipped into the image) and their
    weights, zero for a pixel outside the image (the cut is zero-padded there).
    """
    low, high, frac = mask_paste.bilinear_taps(
        xp, xp.arange(n_out)[None, :], n_out, xp.maximum(length, 1)[:, None])
    low, high = low + start[:, None], high + start[:, None]
    weight_low = (1 - frac) * ((low >= 0) & (low < n_pixel))
    weight_high = frac * ((high >= 0) & (high < n_pixel))
    return (xp.clip(low, 0, n_pixel - 1), xp.clip(high, 0, n_pixel - 1),
            weight_low.astype(numpy.float32), weight_high.astype(numpy.float32))
