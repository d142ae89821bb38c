"""check_roi_arguments: the argument checks the RoI functions share, and the row layout."""

import numbers

import numpy

from cvzoo.core import backend
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.pooling import window_2d


def read_ints(*scalars):
    """0-d integer arrays of one device as Python ints, read in one transfer (one host
    sync on a GPU, however many they are)."""
    xp = backend.get_array_module(*scalars)
    return [int(value) for value in backend.to_numpy(xp.stack(scalars)).tolist()]


def check_index_range(what, low, high, n_image):
    """Raise ValueError unless the RoI batch indexes ``low`` .. ``high`` lie in [0, n_image)."""
    if low < 0 or high >= n_image:
        raise ValueError(f'{what}: roi_indices must lie in [0, {n_image}) (the batch), got '
                         f'[{low}, {high}]')


def check_roi_arguments(what, x, rois, roi_indices, outsize, spatial_scale, check_range=True):
    """Validate the common RoI arguments; return ``(rois, roi_indices, outsize)`` as arrays.

    ``check_range=False`` leaves the range of ``roi_indices`` to the caller, which reads it
    together with what else it reads from the device (:func:`read_ints`,
    :func:`check_index_range`).

    Raises:
        ValueError, TypeError: naming the argument, what was expected and what came.
    """
    rois = variable_module.as_array(rois)
    roi_indices = variable_module.as_array(roi_indices)
    if x.ndim != 4 or numpy.dtype(x.dtype).kind != 'f':
        raise ValueError(f'{what}: x must be (N, C, H, W) float, got {x.shape} {x.dtype}')
    if rois.ndim != 2 or rois.shape[1] != 4 or numpy.dtype(rois.dtype).kind != 'f':
        raise ValueError(f'{what}: rois must be (R, 4) float, got {rois.shape} {rois.dtype}')
    if roi_indices.shape != rois.shape[:1] or numpy.dtype(roi_indices.dtype).kind not in 'iu':
        raise ValueError(
            f'{what}: roi_indices must be ({rois.shape[0]},) int, got {roi_indices.shape} '
            f'{roi_indices.dtype}')
    if check_range and len(roi_indices):
        check_index_range(what, *read_ints(roi_indices.min(), roi_indices.max()), x.shape[0])
    outsize = window_2d.pair(outsize, 'outsize')
    if min(outsize) < 1:
        raise ValueError(f'{what}: outsize must be >= 1, got {outsize}')
    if not isinstance(spatial_scale, numbers.Real) or not spatial_scale > 0:
        raise ValueError(f'{what}: spatial_scale must be a positive number, got '
                         f'{spatial_scale!r}')
    backend.check_same_device((variable_module.as_array(x), rois, roi_indices), what)
    return rois, roi_indices, outsize


def feature_rows(xp, x):
    """(N, C, H, W) -> (N * H * W, C): each feature-map position is one contiguous row."""
    n, c, h, w = x.shape
    return xp.ascontiguousarray(x.transpose(0, 2, 3, 1)).reshape(n * h * w, c)


def rows_to_map(xp, rows, x_shape):
    """The inverse of feature_rows: (N * H * W, C) -> contiguous (N, C, H, W)."""
    n, c, h, w = x_shape
    return xp.ascontiguousarray(rows.reshape(n, h, w, c).transpose(0, 3, 1, 2))
