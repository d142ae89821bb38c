"""Fixtures of the instance segmentation tests: straightforward references of the mask
resizes (one instance and one pixel at a time)."""

import types

import numpy
import pytest


def _resize_bilinear(img, out_H, out_W):
    """OpenCV's INTER_LINEAR of a 2-D float32 array, one output pixel at a time."""
    in_H, in_W = img.shape
    out = numpy.zeros((out_H, out_W), numpy.float32)

    def taps(d, n_in, n_out):
        s = numpy.float32((d + 0.5) * (n_in / n_out) - 0.5)
        low = int(numpy.floor(s))
        frac = s - low
        if low < 0:
            low, frac = 0, 0.0
        if low >= n_in - 1:
            low, frac = n_in - 1, 0.0
        return low, min(low + 1, n_in - 1), frac

    for y in range(out_H):
        y0, y1, fy = taps(y, in_H, out_H)
        for x in range(out_W):
            x0, x1, fx = taps(x, in_W, out_W)
            top = img[y0, x0] * (1 - fx) + img[y0, x1] * fx
            bottom = img[y1, x0] * (1 - fx) + img[y1, x1] * fx
            out[y, x] = top * (1 - fy) + bottom * fy
    return out


def _paste(prob, bbox, size):
    """ChainerCV 0.13.1's segm_to_mask (x-first boxes), instance by instance."""
    pad = 1
    H, W = size
    R, M, _ = prob.shape
    masks = numpy.zeros((R, H, W), bool)
    scale = (M + 2 * pad) / M
    for i in range(R):
        x_min, y_min, x_max, y_max = (float(v) for v in bbox[i])
        cx, cy = (x_min + x_max) / 2, (y_min + y_max) / 2
        half_w, half_h = (x_max - x_min) / 2 * scale, (y_max - y_min) / 2 * scale
        bb = numpy.round(numpy.array([cy - half_h, cx - half_w, cy + half_h, cx + half_w]))
        bb = bb.astype(int)
        bb_h, bb_w = bb[2] - bb[0], bb[3] - bb[1]
        if bb_h <= 0 or bb_w <= 0:
            continue
        canvas = numpy.zeros((M + 2 * pad, M + 2 * pad), numpy.float32)
        canvas[pad:-pad, pad:-pad] = prob[i]
        crop = _resize_bilinear(canvas, bb_h, bb_w) > 0.5
        y0, x0 = max(bb[0], 0), max(bb[1], 0)
        y1, x1 = max(min(bb[2], H), 0), max(min(bb[3], W), 0)
        if y1 <= y0 or x1 <= x0:
            continue
        masks[i, y0:y1, x0:x1] = crop[y0 - bb[0]:y1 - bb[0], x0 - bb[1]:x1 - bb[1]]
    return masks



def _mask_to_segm(gt_masks, rois, index, segm_size):
    """ChainerCV 0.13.1's mask_to_segm (x-first boxes), RoI by RoI."""
    pad = 1
    _, H, W = gt_masks.shape
    S = segm_size + 2 * pad
    scale = S / segm_size
    segms = numpy.zeros((len(rois), segm_size, segm_size), numpy.float32)
    for i in range(len(rois)):
        x_min, y_min, x_max, y_max = (float(v) for v in rois[i])
        cx, cy = (x_min + x_max) / 2, (y_min + y_max) / 2
        half_w, half_h = (x_max - x_min) / 2 * scale, (y_max - y_min) / 2 * scale
        bb = numpy.round(numpy.array([cy - half_h, cx - half_w, cy + half_h, cx + half_w]))
        bb = bb.astype(int)
        y0, x0 = max(bb[0], 0), max(bb[1], 0)
        y1, x1 = max(min(bb[2], H), 0), max(min(bb[3], W), 0)
        if y1 <= y0 or x1 <= x0:
            continue
        crop = numpy.zeros((bb[2] - bb[0], bb[3] - bb[1]), numpy.float32)
        crop[y0 - bb[0]:y1 - bb[0], x0 - bb[1]:x1 - bb[1]] = gt_masks[index[i], y0:y1, x0:x1]
        segm = _resize_bilinear(crop, S, S).astype(numpy.int32)
        segms[i] = segm[pad:-pad, pad:-pad]
    return segms


def _paste_torchvision(prob, bbox, size):
    """torchvision's paste_masks_in_image, instance by instance, thresholded at >= 0.5."""
    pad = 1
    H, W = size
    R, M, _ = prob.shape
    masks = numpy.zeros((R, H, W), bool)
    scale = numpy.float32((M + 2 * pad) / M)
    for i in range(R):
        x_min, y_min, x_max, y_max = bbox[i].astype(numpy.float32)
        half_w, half_h = (x_max - x_min) * numpy.float32(0.5) * scale, \
            (y_max - y_min) * numpy.float32(0.5) * scale
        cx, cy = (x_max + x_min) * numpy.float32(0.5), (y_max + y_min) * numpy.float32(0.5)
        box = [int(cx - half_w), int(cy - half_h), int(cx + half_w), int(cy + half_h)]
        w, h = max(box[2] - box[0] + 1, 1), max(box[3] - box[1] + 1, 1)
        canvas = numpy.zeros((M + 2 * pad, M + 2 * pad), numpy.float32)
        canvas[pad:-pad, pad:-pad] = prob[i]
        crop = _resize_bilinear(canvas, h, w) >= 0.5
        x0, x1 = max(box[0], 0), min(box[2] + 1, W)
        y0, y1 = max(box[1], 0), min(box[3] + 1, H)
        if x1 > x0 and y1 > y0:
            masks[i, y0:y1, x0:x1] = crop[y0 - box[1]:y1 - box[1], x0 - box[0]:x1 - box[0]]
    return masks


@pytest.fixture(scope='session')
def mask_reference():
    """``resize_bilinear(img, H, W)`` (OpenCV's INTER_LINEAR), ``paste(prob, bbox, size)``
    (ChainerCV's segm_to_mask), ``paste_torchvision(prob, bbox, size)`` (torchvision's
    paste_masks_in_image, >= 0.5) and ``mask_to_segm(gt_masks, rois, index, segm_size)``
    (ChainerCV's mask_to_segm), written out plainly, with x-first boxes."""
    return types.SimpleNamespace(resize_bilinear=_resize_bilinear, paste=_paste,
                                 paste_torchvision=_paste_torchvision,
                                 mask_to_segm=_mask_to_segm)
