"""Shift boxes by an offset."""


def translate_bbox(bbox, y_offset=0, x_offset=0):
    """Add ``x_offset`` to the x coordinates and ``y_offset`` to the y coordinates.

    Args:
        bbox (numpy.ndarray): (R, 4), (x_min, y_min, x_max, y_max).
        y_offset (float): vertical shift.
        x_offset (float): horizontal shift.

    Returns:
        numpy.ndarray: (R, 4), a new array.
    """
    bbox = bbox.copy()
    bbox[:, 0::2] += x_offset
    bbox[:, 1::2] += y_offset
    return bbox
