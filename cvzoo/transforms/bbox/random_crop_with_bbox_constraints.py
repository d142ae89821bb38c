"""SSD's random crop whose IoU with the boxes meets one of several constraints."""

import math

import numpy

from cvzoo.utils.bbox import bbox_iou

# (min IoU, max IoU) with the boxes; None is unbounded (SSD, section 3.6).
SSD_CONSTRAINTS = ((0.1, None), (0.3, None), (0.5, None), (0.7, None), (0.9, None),
                   (None, 1))


def _try_crop(bbox, size, min_scale, max_scale, max_aspect_ratio, rng):
    H, W = size
    crop_scale = rng.uniform(min_scale, max_scale)
    aspect_ratio = rng.uniform(max(1 / max_aspect_ratio, crop_scale ** 2),
                                        min(max_aspect_ratio, 1 / crop_scale ** 2))
    crop_H = max(int(H * crop_scale / math.sqrt(aspect_ratio)), 1)
    crop_W = max(int(W * crop_scale * math.sqrt(aspect_ratio)), 1)
    crop_top = rng.randint(H - crop_H + 1)
    crop_left = rng.randint(W - crop_W + 1)
    window = numpy.array([[crop_left, crop_top, crop_left + crop_W, crop_top + crop_H]],
                         dtype=numpy.float32)
    iou = bbox_iou(bbox.astype(numpy.float32), window)[:, 0]
    return (crop_top, crop_left, crop_H, crop_W), iou


def random_crop_with_bbox_constraints(img, bbox, min_scale=0.3, max_scale=1,
                                      max_aspect_ratio=2, constraints=None, max_trial=50,
                                      return_param=False, random_state=None):
    """Crop at random so that the crop's IoU with the boxes meets a drawn constraint.

    For each constraint (min IoU, max IoU), up to ``max_trial`` windows are drawn, and
    the first whose IoU with every box lies in the range is a candidate. The result is
    one of the candidates, or the whole image, at random (Liu et al., "SSD", ECCV 2016,
    section 3.6). Follow with crop_bbox(bbox, y_slice, x_slice,
    allow_outside_center=False, return_param=True), which may drop every box (then
    draw again or keep the original sample).

    Args:
        img (numpy.ndarray): (C, H, W).
        bbox (numpy.ndarray): (R, 4), (x_min, y_min, x_max, y_max); with R = 0 every
            drawn window is a candidate.
        min_scale, max_scale (float): range of the window side / image side.
        max_aspect_ratio (float): largest width / height ratio change.
        constraints (sequence or None): (min_iou, max_iou) pairs; SSD's by default.
        max_trial (int): attempts per constraint.
        return_param (bool): also return ``{'constraint', 'y_slice', 'x_slice'}``
            (``constraint`` is None when the whole image was kept).
        random_state (numpy.random.RandomState or None): the generator drawn from (None:
            NumPy's global one).

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): the cropped (C, crop_H, crop_W) view.
    """
    constraints = SSD_CONSTRAINTS if constraints is None else constraints
    rng = numpy.random if random_state is None else random_state
    H, W = img.shape[1:]
    candidates = [(None, (0, 0, H, W))]
    for constraint in constraints:
        min_iou = -numpy.inf if constraint[0] is None else constraint[0]
        max_iou = numpy.inf if constraint[1] is None else constraint[1]
        for _ in range(max_trial):
            window, iou = _try_crop(bbox, (H, W), min_scale, max_scale, max_aspect_ratio,
                                    rng)
            if len(iou) == 0 or (min_iou <= iou.min() and iou.max() <= max_iou):
                candidates.append((constraint, window))
                break
    constraint, (top, left, crop_H, crop_W) = candidates[rng.randint(len(candidates))]
    y_slice, x_slice = slice(top, top + crop_H), slice(left, left + crop_W)
    img = img[:, y_slice, x_slice]
    if return_param:
        return img, {'constraint': constraint, 'y_slice': y_slice, 'x_slice': x_slice}
    return img
