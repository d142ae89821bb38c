"""Place an image at a random spot of a larger canvas (SSD's zoom-out augmentation)."""

import numpy


def random_expand(img, max_ratio=4, fill=0, return_param=False, random_state=None):
    """Paste ``img`` into a canvas ``ratio`` times larger, ``ratio`` uniform in [1, max_ratio].

    Liu et al., "SSD: Single Shot MultiBox Detector", ECCV 2016, section 3.6. Boxes
    follow with translate_bbox(bbox, y_offset, x_offset).

    Args:
        img (numpy.ndarray): (C, H, W).
        max_ratio (float): the largest ratio of canvas side to image side (>= 1).
        fill (float or sequence of float): the canvas value, one per channel or shared
            (often the dataset mean).
        return_param (bool): also return ``{'ratio', 'y_offset', 'x_offset'}``.
        random_state (numpy.random.RandomState or None): the generator drawn from (None:
            NumPy's global one).

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): (C, out_H, out_W), of img's dtype.
    """
    if max_ratio < 1:
        raise ValueError(f'max_ratio: expected a number >= 1, got {max_ratio!r}')
    C, H, W = img.shape
    rng = numpy.random if random_state is None else random_state
    ratio = rng.uniform(1, max_ratio) if max_ratio > 1 else 1.0
    out_H, out_W = int(H * ratio), int(W * ratio)
    y_offset = rng.randint(out_H - H + 1)
    x_offset = rng.randint(out_W - W + 1)
    out_img = numpy.empty((C, out_H, out_W), dtype=img.dtype)
    out_img[:] = numpy.asarray(fill, dtype=img.dtype).reshape(-1, 1, 1)
    out_img[:, y_offset:y_offset + H, x_offset:x_offset + W] = img
    if return_param:
        return out_img, {'ratio': ratio, 'y_offset': y_offset, 'x_offset': x_offset}
    return out_img
