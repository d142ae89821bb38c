"""Rotate boxes by multiples of 90 degrees, as random_rotate rotates the image."""


def rotate_bbox(bbox, k, size):
    """Rotate boxes counter-clockwise by ``k * 90`` degrees.

    Args:
        bbox (numpy.ndarray): (R, 4), (x_min, y_min, x_max, y_max).
        k (int): the number of quarter turns, as numpy.rot90 and random_rotate use it.
        size (tuple of int): (H, W) of the image before the rotation.

    Returns:
        numpy.ndarray: (R, 4), a new array.
    """
    H, W = size
    bbox = bbox.copy()
    for _ in range(int(k) % 4):
        # NOTE: a quarter turn maps (x, y) in an H x W image to (y, W - x) in a W x H one.
        x_min, y_min, x_max, y_max = bbox.T.copy()
        bbox[:, 0], bbox[:, 2] = y_min, y_max
        bbox[:, 1], bbox[:, 3] = W - x_max, W - x_min
        H, W = W, H
    return bbox
