"""Rescale boxes after an image was resized."""


def resize_bbox(bbox, in_size, out_size):
    """Scale x by out_W / in_W and y by out_H / in_H.

    Args:
        bbox (numpy.ndarray): (R, 4), (x_min, y_min, x_max, y_max).
        in_size (tuple of int): (H, W) before the resize.
        out_size (tuple of int): (H, W) after it.

    Returns:
        numpy.ndarray: (R, 4), a new array of bbox's dtype.

    >>> import numpy
    >>> resize_bbox(numpy.array([[1., 2., 3., 4.]]), (10, 10), (20, 5))
    array([[0.5, 4. , 1.5, 8. ]])
    """
    y_scale = out_size[0] / in_size[0]
    x_scale = out_size[1] / in_size[1]
    bbox = bbox.copy()
    bbox[:, 0::2] *= x_scale
    bbox[:, 1::2] *= y_scale
    return bbox
