"""Mirror boxes together with their image."""


def flip_bbox(bbox, size, y_flip=False, x_flip=False):
    """Flip boxes as flip(img, y_flip, x_flip) flips the image.

    Args:
        bbox (numpy.ndarray): (R, 4), (x_min, y_min, x_max, y_max).
        size (tuple of int): (H, W) of the image.
        y_flip (bool): flip vertically.
        x_flip (bool): flip horizontally.

    Returns:
        numpy.ndarray: (R, 4), a new array.

    >>> import numpy
    >>> flip_bbox(numpy.array([[1., 2., 3., 4.]]), (10, 10), x_flip=True)
    array([[7., 2., 9., 4.]])
    """
    H, W = size
    bbox = bbox.copy()
    if y_flip:
        bbox[:, [1, 3]] = H - bbox[:, [3, 1]]
    if x_flip:
        bbox[:, [0, 2]] = W - bbox[:, [2, 0]]
    return bbox
