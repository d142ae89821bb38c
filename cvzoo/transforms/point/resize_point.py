"""Rescale keypoints after an image was resized."""


def resize_point(point, in_size, out_size):
    """Scale x by out_W / in_W and y by out_H / in_H.

    Args:
        point (numpy.ndarray): (..., 2) points as (x, y), the box order of DESIGN.md.
        in_size (tuple of int): (H, W) before the resize.
        out_size (tuple of int): (H, W) after it.

    Returns:
        numpy.ndarray: a new array of point's shape.
    """
    point = point.copy()
    point[..., 0] *= out_size[1] / in_size[1]
    point[..., 1] *= out_size[0] / in_size[0]
    return point
