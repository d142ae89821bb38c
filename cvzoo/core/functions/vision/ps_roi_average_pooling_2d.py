"""ps_roi_average_pooling_2d: position-sensitive RoI average pooling (R-FCN, FCIS).

ChainerCV's semantics (which follow the R-FCN/FCIS CUDA kernels): each bin of a RoI has
integer bounds, floor of its start and ceil of its end, clipped to the map, and averages
the pixels inside them of the one channel that belongs to the bin's position group.

The op is linear in x. Forward reads each bin's sum from an integral image (four corners
per bin, each a contiguous row of the out_C channels of the bin's position group);
backward writes each bin's gradient, divided by its area, at the same four corners of a
difference image, whose 2-D prefix sum is the gradient of x. Both run in
float64 for float32 inputs, so that the differences of large prefix sums keep their
precision. The backward's own gradient is the forward again.
"""

import numbers

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core.functions.vision import roi_arguments


class _Plan:
    """Where each output bin reads: rows of the channel-last integral image.

    The integral image is laid out (N, H + 1, W + 1, g * g, out_C): one row holds the
    out_C channels of one position group at one corner, so a bin reads four contiguous
    rows.

    Attributes:
        corners (tuple of 4 arrays): row indexes of the corners (y0, x0), (y0, x1),
            (y1, x0), (y1, x1) of each bin, each (R, out_H, out_W).
        inverse_area (array): (R, out_H, out_W), 1 / the bin's pixel count, 0 if empty.
        x_shape (tuple): (N, C, H, W) of the pooled map.
        n_group (int): g * g.
    """

    def __init__(self, corners, inverse_area, x_shape, n_group):
        self.corners = corners
        self.inverse_area = inverse_area
        self.x_shape = x_shape
        self.n_group = n_group

    def integral_shape(self):
        """(N, H + 1, W + 1, g * g, out_C)."""
        n, c, h, w = self.x_shape
        return n, h + 1, w + 1, self.n_group, c // self.n_group


def _bin_bounds(xp, start, end, n_bin, size):
    """Integer [low, high) of each bin along one axis, (R, n_bin), clipped to [0, size]."""
    bin_size = xp.maximum(end - start, 0.1) / n_bin
    steps = xp.arange(n_bin, dtype=numpy.float64)
    low = xp.floor(steps * bin_size + start).astype(numpy.intp)
    high = xp.ceil((steps + 1) * bin_size + start).astype(numpy.intp)
    return xp.clip(low, 0, size), xp.clip(high, 0, size)


def _make_plan(x_shape, rois, roi_indices, outsize, spatial_scale, group_size):
    xp = backend.get_array_module(rois)
    n, c, h, w = x_shape
    out_h, out_w = outsize
    # NOTE: float64 bounds, as ChainerCV's CPU code computes them.
    boxes = rois.astype(numpy.float64) * spatial_scale
    y_low, y_high = _bin_bounds(xp, boxes[:, 1:2], boxes[:, 3:4], out_h, h)
    x_low, x_high = _bin_bounds(xp, boxes[:, 0:1], boxes[:, 2:3], out_w, w)
    y_low, y_high = y_low[:, :, None], y_high[:, :, None]
    x_low, x_high = x_low[:, None, :], x_high[:, None, :]
    # The channel of bin (k, i, j) is k * g * g + group, its position group
    # (i * g // out_H, j * g // out_W) in row-major order.
    group_y = numpy.minimum(numpy.arange(out_h) * group_size // out_h, group_size - 1)
    group_x = numpy.minimum(numpy.arange(out_w) * group_size // out_w, group_size - 1)
    group = backend.on_device_of(group_y[:, None] * group_size + group_x, rois,
                                 dtype=numpy.intp)
    n_group = group_size * group_size
    image = roi_indices.astype(numpy.intp)[:, None, None] * (h + 1)
    corners = tuple(((image + y) * (w + 1) + x_) * n_group + group
                    for y in (y_low, y_high) for x_ in (x_low, x_high))
    area = (y_high - y_low) * (x_high - x_low)
    inverse_area = xp.where(area > 0, 1.0 / xp.maximum(area, 1), 0.0)
    return _Plan(corners, inverse_area, x_shape, n_group)


def _accumulation_dtype(dtype):
    return numpy.promote_types(dtype, numpy.float64)


class PSROIAveragePooling2D(function_node.FunctionNode):
    """Average each bin's pixels of its position group's channel (see the module doc)."""

    def __init__(self, plan):
        self.plan = plan

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        n, h1, w1, n_group, out_c = self.plan.integral_shape()
        integral = xp.zeros((n, h1, w1, n_group, out_c), dtype=_accumulation_dtype(x.dtype))
        integral[:, 1:, 1:] = x.reshape(n, out_c, n_group, h1 - 1, w1 - 1).transpose(
            0, 3, 4, 2, 1)
        rows = integral.cumsum(axis=1).cumsum(axis=2).reshape(-1, out_c)
        top_left, top_right, bottom_left, bottom_right = self.plan.corners
        # NOTE: in place: each (R, out_H, out_W, out_C) temporary is large
        total = rows[bottom_right]
        total -= rows[bottom_left]
        total -= rows[top_right]
        total += rows[top_left]
        total *= self.plan.inverse_area[..., None]
        return xp.ascontiguousarray(total.astype(x.dtype).transpose(0, 3, 1, 2)),

    def backward(self, indexes, grad_outputs):
        return _PSROIAveragePooling2DGrad(self.plan).apply(grad_outputs)


class _PSROIAveragePooling2DGrad(function_node.FunctionNode):
    """Spread each bin's gradient evenly over its pixels (the forward's transpose)."""

    def __init__(self, plan):
        self.plan = plan

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        n, h1, w1, n_group, out_c = shape = self.plan.integral_shape()
        share = (gy.astype(_accumulation_dtype(gy.dtype)).transpose(0, 2, 3, 1)
                 * self.plan.inverse_area[..., None]).ravel()
        difference = xp.zeros(n * h1 * w1 * n_group * out_c, dtype=share.dtype)
        channels = xp.arange(out_c)
        # NOTE: add.at on a flat array with flat indexes (faster than whole rows)
        index = xp.concatenate([(corner[..., None] * out_c + channels).ravel()
                                for corner in self.plan.corners])
        backend.add_at(difference, index, xp.concatenate([share, -share, -share, share]))
        gx = difference.reshape(shape).cumsum(axis=1).cumsum(axis=2)[:, :h1 - 1, :w1 - 1]
        gx = gx.transpose(0, 4, 3, 1, 2).reshape(n, out_c * n_group, h1 - 1, w1 - 1)
        return xp.ascontiguousarray(gx).astype(gy.dtype),

    def backward(self, indexes, grad_outputs):
        return PSROIAveragePooling2D(self.plan).apply(grad_outputs)


def _check_outsize(outsize):
    """``outsize`` as ``(out_C or None, out_H, out_W)``."""
    if isinstance(outsize, (tuple, list)) and len(outsize) == 3:
        out_c = outsize[0]
        if (isinstance(out_c, bool) or not isinstance(out_c, numbers.Integral)
                or out_c < 1):
            raise ValueError(f'ps_roi_average_pooling_2d: outsize[0] (channels) must be a '
                             f'positive int, got {out_c!r}')
        return int(out_c), tuple(outsize[1:])
    return None, outsize


def _check_channels(x, out_c, group_size):
    if (isinstance(group_size, bool) or not isinstance(group_size, numbers.Integral)
            or group_size < 1):
        raise ValueError(f'ps_roi_average_pooling_2d: group_size must be a positive int, '
                         f'got {group_size!r}')
    n_group = group_size * group_size
    channels = x.shape[1]
    if out_c is None:
        if channels % n_group:
            raise ValueError(
                f'ps_roi_average_pooling_2d: x must have a multiple of group_size ** 2 = '
                f'{n_group} channels, got {channels}')
        return channels // n_group
    if channels != out_c * n_group:
        raise ValueError(
            f'ps_roi_average_pooling_2d: x must have outsize[0] * group_size ** 2 = '
            f'{out_c * n_group} channels, got {channels}')
    return out_c


def ps_roi_average_pooling_2d(x, rois, roi_indices, outsize, spatial_scale, group_size, *,
                              index_range=None):
    """Position-sensitive RoI average pooling (Dai et al., R-FCN, NIPS 2016; FCIS).

    A RoI, scaled by ``spatial_scale`` (at least 0.1 feature-map pixels a side), is cut
    into out_H x out_W bins; bin (i, j) spans the integer pixels from floor of its start
    to ceil of its end, clipped to the map. Output channel k of bin (i, j) is the mean
    over those pixels of input channel ``(k * g + gy) * g + gx``, where
    ``(gy, gx) = (i * g // out_H, j * g // out_W)`` is the bin's position group and
    ``g = group_size``; an empty bin gives 0. As ChainerCV's ps_roi_average_pooling_2d.
    The gradient flows to x only, not to the rois; double backprop is supported.

    Args:
        x (Variable or array): (N, out_C * g * g, H, W) float feature map.
        rois (array): (R, 4) float, (x_min, y_min, x_max, y_max) in image pixels (the
            cvzoo bbox order; ChainerCV used y first).
        roi_indices (array): (R,) int32, the batch index of each RoI.
        outsize (int, pair or triple of int): (out_H, out_W) bins, or
            (out_C, out_H, out_W), whose out_C is checked against x's channels.
        spatial_scale (float): feature-map pixels per image pixel (1 / stride).
        group_size (int): g, the position groups per side.
        index_range (pair of int or None): ``(low, high)``, bounds of ``roi_indices`` the
            caller has already read from the device (e.g. once for several calls on the
            same RoIs); they are checked against the batch instead of reading
            ``roi_indices`` back, a host sync on a GPU.

    Returns:
        Variable: (R, out_C, out_H, out_W), the dtype of x.

    >>> import numpy as np
    >>> x = np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4)
    >>> rois = np.array([[0, 0, 4, 4]], dtype=np.float32)
    >>> ps_roi_average_pooling_2d(x, rois, np.zeros(1, np.int32), 2, 1.0, 2).array
    array([[[[ 2.5, 20.5],
             [42.5, 60.5]]]], dtype=float32)
    """
    out_c, outsize = _check_outsize(outsize)
    rois, roi_indices, outsize = roi_arguments.check_roi_arguments(
        'ps_roi_average_pooling_2d', x, rois, roi_indices, outsize, spatial_scale,
        check_range=index_range is None)
    if index_range is not None and len(roi_indices):
        roi_arguments.check_index_range('ps_roi_average_pooling_2d', *index_range, x.shape[0])
    _check_channels(x, out_c, group_size)
    with backend.using_device_of(rois):
        plan = _make_plan(x.shape, rois, roi_indices, outsize, spatial_scale,
                          int(group_size))
    return PSROIAveragePooling2D(plan).apply((x,))[0]
