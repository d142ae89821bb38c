"""Crop a window of random area and aspect ratio (Inception-style augmentation)."""

import math

import numpy


def random_sized_crop(img, scale_ratio_range=(0.08, 1), aspect_ratio_range=(3 / 4, 4 / 3),
                      return_param=False, copy=False):
    """Cut a window whose area and shape are drawn at random.

    The window's area is ``scale_ratio * H * W`` with ``scale_ratio`` uniform in
    ``scale_ratio_range``, its aspect ratio (width / height) is uniform in
    ``aspect_ratio_range``, and each side is clipped to the image (Szegedy et al.,
    "Going deeper with convolutions", CVPR 2015, section 6). The result is usually
    resized to a fixed size afterwards.

    Args:
        img (numpy.ndarray): (C, H, W).
        scale_ratio_range (tuple of float): range of the window area / image area.
        aspect_ratio_range (tuple of float): range of the window's width / height.
        return_param (bool): also return the window.
        copy (bool): return a copy instead of a view.

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): the crop, and with ``return_param``
        ``{'y_slice', 'x_slice', 'scale_ratio', 'aspect_ratio'}``.
    """
    H, W = img.shape[1:]
    scale_ratio = numpy.random.uniform(*scale_ratio_range)
    aspect_ratio = numpy.random.uniform(*aspect_ratio_range)
    out_W = int(math.floor(math.sqrt(scale_ratio * H * W * aspect_ratio)))
    out_H = int(math.floor(math.sqrt(scale_ratio * H * W / aspect_ratio)))
    out_H, out_W = min(max(out_H, 1), H), min(max(out_W, 1), W)
    y_offset = numpy.random.randint(H - out_H + 1)
    x_offset = numpy.random.randint(W - out_W + 1)
    y_slice = slice(y_offset, y_offset + out_H)
    x_slice = slice(x_offset, x_offset + out_W)
    img = img[:, y_slice, x_slice]
    if copy:
        img = img.copy()
    if return_param:
        return img, {'y_slice': y_slice, 'x_slice': x_slice,
                     'scale_ratio': scale_ratio, 'aspect_ratio': aspect_ratio}
    return img
