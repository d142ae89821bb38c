"""Crop a window of fixed size at a random place."""

import numpy


def random_crop(img, size, return_param=False, copy=False):
    """Cut an (H, W) = ``size`` window at a uniformly random offset.

    Args:
        img (numpy.ndarray): (C, H, W), at least as large as ``size``.
        size (tuple of int): (out_H, out_W).
        return_param (bool): also return the window.
        copy (bool): return a copy instead of a view.

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): the crop, and with ``return_param``
        ``{'y_slice': slice, 'x_slice': slice}``.
    """
    H, W = img.shape[1:]
    out_H, out_W = size
    if out_H > H or out_W > W:
        raise ValueError(f'size: expected at most the image size {(H, W)}, got {size!r}')
    y_offset = numpy.random.randint(H - out_H + 1)
    x_offset = numpy.random.randint(W - out_W + 1)
    y_slice = slice(y_offset, y_offset + out_H)
    x_slice = slice(x_offset, x_offset + out_W)
    img = img[:, y_slice, x_slice]
    if copy:
        img = img.copy()
    if return_param:
        return img, {'y_slice': y_slice, 'x_slice': x_slice}
    return img
