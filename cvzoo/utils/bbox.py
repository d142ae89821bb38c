"""Bounding-box and mask operations on NumPy or CuPy arrays (the backend follows the input).

Boxes are (R, 4) arrays of (x_min, y_min, x_max, y_max) in continuous pixel
coordinates (DESIGN.md): a box's width is ``x_max - x_min``, with no ``+ 1``.
"""

from cvzoo.core import backend


def _check_bbox(bbox, name: str) -> None:
    shape = getattr(bbox, 'shape', None)
    if shape is None or len(shape) != 2 or shape[1] != 4:
        raise ValueError(f'{name}: expected an (R, 4) array, got shape {shape}')


def _as_float(xp, array):
    if xp.issubdtype(array.dtype, xp.floating):
        return array
    return array.astype(xp.float32)


def bbox_area(bbox):
    """Return the area of each box, 0 for boxes with negative width or height.

    Args:
        bbox (array): (R, 4), (x_min, y_min, x_max, y_max).

    Returns:
        array: (R,) areas, float (the input's float dtype, float32 for integer input).

    >>> import numpy as np
    >>> bbox_area(np.array([[0, 0, 2, 3], [1, 1, 0, 2]], np.float32))
    array([6., 0.], dtype=float32)
    """
    _check_bbox(bbox, 'bbox')
    xp = backend.get_array_module(bbox)
    bbox = _as_float(xp, bbox)
    size = xp.maximum(bbox[:, 2:] - bbox[:, :2], 0)
    return size[:, 0] * size[:, 1]


def bbox_iou(bbox_a, bbox_b):
    """Return the intersection over union of every pair of boxes.

    Args:
        bbox_a (array): (N, 4), (x_min, y_min, x_max, y_max).
        bbox_b (array): (K, 4), same layout, same device.

    Returns:
        array: (N, K), IoU in [0, 1]; 0 where both boxes are empty.

    >>> import numpy as np
    >>> a = np.array([[0, 0, 2, 2]], np.float32)
    >>> b = np.array([[1, 0, 3, 2], [5, 5, 6, 6]], np.float32)
    >>> bbox_iou(a, b)
    array([[0.33333334, 0.        ]], dtype=float32)
    """
    _check_bbox(bbox_a, 'bbox_a')
    _check_bbox(bbox_b, 'bbox_b')
    backend.check_same_device((bbox_a, bbox_b), 'bbox_iou')
    xp = backend.get_array_module(bbox_a, bbox_b)
    bbox_a, bbox_b = _as_float(xp, bbox_a), _as_float(xp, bbox_b)
    top_left = xp.maximum(bbox_a[:, None, :2], bbox_b[None, :, :2])
    bottom_right = xp.minimum(bbox_a[:, None, 2:], bbox_b[None, :, 2:])
    overlap = xp.maximum(bottom_right - top_left, 0)
    intersection = overlap[:, :, 0] * overlap[:, :, 1]
    union = bbox_area(bbox_a)[:, None] + bbox_area(bbox_b)[None, :] - intersection
    # NOTE: an empty union means an empty intersection too; tiny avoids 0 / 0 = nan.
    union = xp.maximum(union, xp.finfo(union.dtype).tiny)
    return intersection / union


def clip_bbox(bbox, size):
    """Clip boxes to the image: x into [0, W], y into [0, H].

    Args:
        bbox (array): (R, 4), (x_min, y_min, x_max, y_max).
        size (tuple of int): (H, W) of the image.

    Returns:
        array: (R, 4), a new array of the same dtype.
    """
    _check_bbox(bbox, 'bbox')
    if len(size) != 2:
        raise ValueError(f'size: expected (H, W), got {size!r}')
    xp = backend.get_array_module(bbox)
    H, W = size
    upper = xp.asarray([W, H, W, H], dtype=bbox.dtype)
    return xp.minimum(xp.maximum(bbox, 0), upper)


def bbox_to_coco(bbox):
    """Turn (x_min, y_min, x_max, y_max) boxes into COCO's (x, y, width, height).

    >>> import numpy as np
    >>> bbox_to_coco(np.array([[1, 2, 4, 6]], np.float32))
    array([[1., 2., 3., 4.]], dtype=float32)
    """
    _check_bbox(bbox, 'bbox')
    xp = backend.get_array_module(bbox)
    return xp.concatenate((bbox[:, :2], bbox[:, 2:] - bbox[:, :2]), axis=1)


def coco_to_bbox(coco_bbox):
    """Turn COCO's (x, y, width, height) boxes into (x_min, y_min, x_max, y_max).

    >>> import numpy as np
    >>> coco_to_bbox(np.array([[1, 2, 3, 4]], np.float32))
    array([[1., 2., 4., 6.]], dtype=float32)
    """
    _check_bbox(coco_bbox, 'coco_bbox')
    xp = backend.get_array_module(coco_bbox)
    return xp.concatenate((coco_bbox[:, :2], coco_bbox[:, :2] + coco_bbox[:, 2:]), axis=1)


def _first_and_end(xp, occupied):
    """Index of the first True along axis 1, and one past the last True."""
    length = occupied.shape[1]
    first = xp.argmax(occupied, axis=1)
    end = length - xp.argmax(occupied[:, ::-1], axis=1)
    return first, end


def mask_to_bbox(mask):
    """Return the tightest box around each mask; all zeros for an empty mask.

    Args:
        mask (array): (R, H, W) bool.

    Returns:
        array: (R, 4) float32, (x_min, y_min, x_max, y_max), ``x_max`` being the last
        column that holds the mask plus one (a pixel covers [x, x + 1)).

    >>> import numpy as np
    >>> mask = np.zeros((1, 4, 5), bool); mask[0, 1:3, 2] = True
    >>> mask_to_bbox(mask)
    array([[2., 1., 3., 3.]], dtype=float32)
    """
    shape = getattr(mask, 'shape', None)
    if shape is None or len(shape) != 3:
        raise ValueError(f'mask: expected an (R, H, W) array, got shape {shape}')
    xp = backend.get_array_module(mask)
    mask = mask.astype(bool)
    rows = mask.any(axis=2)
    columns = mask.any(axis=1)
    y_min, y_max = _first_and_end(xp, rows)
    x_min, x_max = _first_and_end(xp, columns)
    bbox = xp.stack((x_min, y_min, x_max, y_max), axis=1).astype(xp.float32)
    empty = ~rows.any(axis=1)
    bbox[empty] = 0
    return bbox


def mask_iou(mask_a, mask_b):
    """Return the intersection over union of every pair of masks.

    Args:
        mask_a (array): (N, H, W) bool.
        mask_b (array): (K, H, W) bool, same H and W, same device.

    Returns:
        array: (N, K) float32; 0 where both masks are empty.
    """
    for name, mask in (('mask_a', mask_a), ('mask_b', mask_b)):
        if getattr(mask, 'ndim', None) != 3:
            raise ValueError(f'{name}: expected an (R, H, W) array, got shape '
                             f'{getattr(mask, "shape", None)}')
    if mask_a.shape[1:] != mask_b.shape[1:]:
        raise ValueError(f'mask_b: expected masks of size {mask_a.shape[1:]} like mask_a, '
                         f'got {mask_b.shape[1:]}')
    backend.check_same_device((mask_a, mask_b), 'mask_iou')
    xp = backend.get_array_module(mask_a, mask_b)
    # NOTE: float64 counts are exact for any image size; one matmul gives every overlap.
    flat_a = mask_a.reshape(len(mask_a), -1).astype(xp.float64)
    flat_b = mask_b.reshape(len(mask_b), -1).astype(xp.float64)
    intersection = flat_a @ flat_b.T
    union = flat_a.sum(axis=1)[:, None] + flat_b.sum(axis=1)[None, :] - intersection
    return (intersection / xp.maximum(union, 1)).astype(xp.float32)
