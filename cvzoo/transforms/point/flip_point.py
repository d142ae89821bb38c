"""Mirror keypoints together with their image."""


def flip_point(point, size, y_flip=False, x_flip=False):
    """Flip (x, y) points as flip(img, y_flip, x_flip) flips the image.

    A point is a continuous coordinate, like a box corner: x becomes W - x.

    Args:
        point (numpy.ndarray): (..., 2) points as (x, y).
        size (tuple of int): (H, W) of the image.
        y_flip (bool): flip vertically.
        x_flip (bool): flip horizontally.

    Returns:
        numpy.ndarray: a new array of point's shape.
    """
    H, W = size
    point = point.copy()
    if y_flip:
        point[..., 1] = H - point[..., 1]
    if x_flip:
        point[..., 0] = W - point[..., 0]
    return point
