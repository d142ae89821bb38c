"""Fit an image inside a canvas of a given size, keeping its aspect ratio (letterbox)."""

import numpy

from cvzoo.transforms.image.resize import resize


def resize_contain(img, size, fill=0, interpolation='bilinear', return_param=False):
    """Scale ``img`` to the largest size that fits in ``size`` and paste it in the middle.

    The aspect ratio is kept; the margins of the (C, size[0], size[1]) canvas hold
    ``fill``. Boxes follow with ``resize_bbox(bbox, img.shape[1:], param['scaled_size'])``
    then ``translate_bbox(bbox, param['y_offset'], param['x_offset'])``.

    Args:
        img (numpy.ndarray): (C, H, W).
        size (tuple of int): (H, W) of the output, positive.
        fill (float or sequence of float): the margin value, shared or one per channel.
        interpolation (str): as in resize.
        return_param (bool): also return ``{'y_offset', 'x_offset', 'scaled_size'}``:
            where the scaled image's top-left corner lies and its (H, W).

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): (C, size[0], size[1]), of img's dtype.

    >>> import numpy
    >>> out, param = resize_contain(numpy.ones((3, 10, 20), numpy.float32), (30, 30),
    ...                             return_param=True)
    >>> out.shape, param
    ((3, 30, 30), {'y_offset': 7, 'x_offset': 0, 'scaled_size': (15, 30)})
    """
    if len(size) != 2 or min(size) < 1:
        raise ValueError(f'size: expected (H, W) with positive sides, got {size!r}')
    out_H, out_W = int(size[0]), int(size[1])
    C, H, W = img.shape
    factor = min(out_H / H, out_W / W)
    scaled_size = (min(out_H, max(1, int(round(H * factor)))),
                   min(out_W, max(1, int(round(W * factor)))))
    scaled = resize(img, scaled_size, interpolation)
    y_offset = (out_H - scaled_size[0]) // 2
    x_offset = (out_W - scaled_size[1]) // 2
    out_img = numpy.empty((C, out_H, out_W), dtype=img.dtype)
    out_img[:] = numpy.asarray(fill, dtype=img.dtype).reshape(-1, 1, 1)
    out_img[:, y_offset:y_offset + scaled_size[0], x_offset:x_offset + scaled_size[1]] = scaled
    if return_param:
        return out_img, {'y_offset': y_offset, 'x_offset': x_offset, 'scaled_size': scaled_size}
    return out_img
