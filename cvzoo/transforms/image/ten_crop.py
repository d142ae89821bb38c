"""The ten crops used to evaluate classifiers: four corners, centre, and their mirrors."""

import numpy


def ten_crop(img, size):
    """Cut the centre and four corner windows, and their left-right mirrors.

    Args:
        img (numpy.ndarray): (C, H, W).
        size (tuple of int): (out_H, out_W), at most (H, W).

    Returns:
        numpy.ndarray: (10, C, out_H, out_W) in the order centre, top-left, bottom-left,
        top-right, bottom-right, then the same five mirrored.
    """
    H, W = img.shape[1:]
    out_H, out_W = size
    if out_H > H or out_W > W:
        raise ValueError(f'size: expected at most the image size {(H, W)}, got {size!r}')
    y_center, x_center = int(round((H - out_H) / 2.0)), int(round((W - out_W) / 2.0))
    offsets = [(y_center, x_center), (0, 0), (H - out_H, 0), (0, W - out_W),
               (H - out_H, W - out_W)]
    crops = [img[:, y:y + out_H, x:x + out_W] for y, x in offsets]
    crops += [crop[:, :, ::-1] for crop in crops]
    return numpy.stack(crops)
