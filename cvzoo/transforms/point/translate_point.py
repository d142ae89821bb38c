"""Shift keypoints by an offset."""


def translate_point(point, y_offset=0, x_offset=0):
    """Add ``x_offset`` to x and ``y_offset`` to y of (x, y) points.

    Args:
        point (numpy.ndarray): (..., 2) points as (x, y).
        y_offset (float): vertical shift.
        x_offset (float): horizontal shift.

    Returns:
        numpy.ndarray: a new array of point's shape.
    """
    point = point.copy()
    point[..., 0] += x_offset
    point[..., 1] += y_offset
    return point
