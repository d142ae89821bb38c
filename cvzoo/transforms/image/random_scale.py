"""Resize an image by a random factor (the scale augmentation of segmentation training)."""

import numpy

from cvzoo.transforms.image.resize import resize


def random_scale(img, scale_range=(0.5, 2.0), interpolation='bilinear', return_param=False):
    """Resize both sides by one factor drawn uniformly from ``scale_range``.

    PSPNet and DeepLab train with factors in [0.5, 2.0]. The label map follows with
    ``resize(label[None], param['size'], 'nearest')[0]``, boxes with
    ``resize_bbox(bbox, img.shape[1:], param['size'])``.

    Args:
        img (numpy.ndarray): (C, H, W).
        scale_range (tuple of float): (low, high), 0 < low <= high.
        interpolation (str): as in resize.
        return_param (bool): also return ``{'scale', 'size'}``: the factor drawn and the
            (H, W) of the output (each side rounded, at least 1).

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): (C, out_H, out_W), of img's dtype.

    >>> import numpy
    >>> out, param = random_scale(numpy.zeros((3, 10, 20), numpy.float32), (2, 2),
    ...                           return_param=True)
    >>> out.shape, param['size']
    ((3, 20, 40), (20, 40))
    """
    if len(scale_range) != 2 or not 0 < scale_range[0] <= scale_range[1]:
        raise ValueError(f'scale_range: expected (low, high) with 0 < low <= high, got '
                         f'{scale_range!r}')
    low, high = float(scale_range[0]), float(scale_range[1])
    factor = numpy.random.uniform(low, high) if high > low else low
    H, W = img.shape[1:]
    size = (max(1, int(round(H * factor))), max(1, int(round(W * factor))))
    out_img = resize(img, size, interpolation)
    if return_param:
        return out_img, {'scale': factor, 'size': size}
    return out_img
