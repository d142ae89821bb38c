"""Flip an image vertically and/or horizontally."""


def flip(img, y_flip=False, x_flip=False, copy=False):
    """Mirror ``img`` upside down (``y_flip``) and/or left to right (``x_flip``).

    Args:
        img (numpy.ndarray): (C, H, W).
        y_flip (bool): flip vertically.
        x_flip (bool): flip horizontally.
        copy (bool): return a copy instead of a (negatively strided) view.

    Returns:
        numpy.ndarray: (C, H, W).

    >>> import numpy
    >>> flip(numpy.array([[[1, 2, 3]]]), x_flip=True)
    array([[[3, 2, 1]]])
    """
    if y_flip:
        img = img[:, ::-1, :]
    if x_flip:
        img = img[:, :, ::-1]
    return img.copy() if copy else img
