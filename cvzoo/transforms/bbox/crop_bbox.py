"""Crop boxes to a window, dropping those that fall out."""

import numpy


def _bounds(window, length_name):
    start = 0 if window is None or window.start is None else window.start
    stop = numpy.inf if window is None or window.stop is None else window.stop
    if window is not None and window.step not in (None, 1):
        raise ValueError(f'{length_name}: expected a slice with step 1, got {window!r}')
    return start, stop


def crop_bbox(bbox, y_slice=None, x_slice=None, allow_outside_center=True,
              return_param=False):
    """Clip boxes to the window ``img[:, y_slice, x_slice]`` and move them into it.

    Boxes that end up empty are dropped; with ``allow_outside_center=False`` so are
    boxes whose centre lies outside the window. ``param['index']`` lists the kept
    boxes, so that labels (and difficult flags...) are dropped in step:
    ``label = label[param['index']]``. A crop that removes every box returns an empty
    (0, 4) array and an empty index; a caller that needs boxes can draw another crop.

    Args:
        bbox (numpy.ndarray): (R, 4), (x_min, y_min, x_max, y_max).
        y_slice (slice or None): rows of the window; None is every row.
        x_slice (slice or None): columns of the window.
        allow_outside_center (bool): keep boxes whose centre is outside the window.
        return_param (bool): also return ``{'index': (K,) int array}``.

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict): (K, 4) boxes in window coordinates.

    >>> bbox = numpy.array([[0., 0., 4., 4.], [6., 6., 8., 8.]])
    >>> crop_bbox(bbox, slice(1, 5), slice(2, 5), return_param=True)
    (array([[0., 0., 2., 3.]]), {'index': array([0])})
    """
    y_start, y_stop = _bounds(y_slice, 'y_slice')
    x_start, x_stop = _bounds(x_slice, 'x_slice')
    crop = numpy.array((x_start, y_start, x_stop, y_stop))
    keep = numpy.ones(len(bbox), dtype=bool)
    if not allow_outside_center:
        center = (bbox[:, :2] + bbox[:, 2:]) / 2.0
        keep &= ((crop[:2] <= center) & (center < crop[2:])).all(axis=1)
    top_left = numpy.maximum(bbox[:, :2], crop[:2])
    bottom_right = numpy.minimum(bbox[:, 2:], crop[2:])
    keep &= (top_left < bottom_right).all(axis=1)
    out = numpy.concatenate((top_left - crop[:2], bottom_right - crop[:2]), axis=1)
    out = out[keep].astype(bbox.dtype, copy=False)
    if return_param:
        return out, {'index': numpy.flatnonzero(keep)}
    return out
