"""Rotate an image by a random multiple of 90 degrees."""

import numpy


def random_rotate(img, return_param=False):
    """Rotate counter-clockwise by ``k * 90`` degrees, ``k`` uniform in {0, 1, 2, 3}.

    Boxes follow with rotate_bbox(bbox, k, size) where size is the input's (H, W).

    Args:
        img (numpy.ndarray): (C, H, W).
        return_param (bool): also return ``{'k': int}``.

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): (C, H, W) for even k, (C, W, H) for odd
        k (a copy).
    """
    k = int(numpy.random.randint(4))
    img = numpy.ascontiguousarray(numpy.rot90(img, k, axes=(1, 2)))
    if return_param:
        return img, {'k': k}
    return img
