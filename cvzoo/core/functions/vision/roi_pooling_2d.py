"""roi_pooling_2d: RoI max pooling (Girshick, Fast R-CNN, ICCV 2015), Chainer's semantics."""

import itertools

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import config as config_module
from cvzoo.core.functions.vision import roi_arguments


def _bin_edges(xp, low, high, n_bin, size):
    """Integer [start, end) of each bin along one axis; (R, n_bin) arrays.

    ``low``/``high`` are the RoI's first and last pixel, (R, 1) ints.
    """
    bin_size = xp.maximum(high - low + 1, 1) / n_bin
    steps = xp.arange(n_bin, dtype=numpy.float64)[None, :]
    start = xp.clip(xp.floor(steps * bin_size).astype(numpy.intp) + low, 0, size)
    end = xp.clip(xp.ceil((steps + 1) * bin_size).astype(numpy.intp) + low, 0, size)
    return start, end


class RoIPooling2D(function_node.FunctionNode):
    def __init__(self, rois, roi_indices, outsize, spatial_scale):
        # NOTE: round() as Caffe's Fast R-CNN (half away from zero for these >= 0 values).
        xp = backend.get_array_module(rois)
        corners = xp.floor(rois.astype(numpy.float64) * spatial_scale + 0.5).astype(numpy.intp)
        self.x_edges = (corners[:, 0:1], corners[:, 2:3])
        self.y_edges = (corners[:, 1:2], corners[:, 3:4])
        self.roi_indices = roi_indices.astype(numpy.intp)
        self.outsize = outsize
        self.target = None  # (R, out_H, out_W, C) flat index into x's rows of each max

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        _, c, h, w = self.x_shape = x.shape
        (out_h, out_w), n_roi = self.outsize, len(self.roi_indices)
        y_start, y_end = _bin_edges(xp, *self.y_edges, out_h, h)
        x_start, x_end = _bin_edges(xp, *self.x_edges, out_w, w)
        rows = roi_arguments.feature_rows(xp, x)
        best = xp.full((n_roi, out_h, out_w, c), -numpy.inf, dtype=x.dtype)
        # NOTE: the winner is tracked (as its step number, small ints) only when a
        # backward may follow; inference skips that bookkeeping, half the work.
        track = config_module.config.enable_backprop
        base = self.roi_indices[:, None, None] * (h * w)
        span_y = span_x = 0
        if n_roi:
            # NOTE: one read for the loop's extent and the range check of roi_indices
            span_y, span_x, low, high = roi_arguments.read_ints(
                (y_end - y_start).max(), (x_end - x_start).max(), self.roi_indices.min(),
                self.roi_indices.max())
            roi_arguments.check_index_range('roi_pooling_2d', low, high, x.shape[0])
        step_dtype = numpy.int16 if span_y * span_x < 2 ** 15 else numpy.int32
        step_won = xp.full(best.shape, -1, dtype=step_dtype) if track else None
        for step, (dy, dx) in enumerate(itertools.product(range(span_y), range(span_x))):
            y, x_ = y_start + dy, x_start + dx
            inside = ((y < y_end)[:, :, None] & (x_ < x_end)[:, None, :])[..., None]
            index = (base + xp.minimum(y, h - 1)[:, :, None] * w
                     + xp.minimum(x_, w - 1)[:, None, :])
            cells = rows[index]
            # NOTE: a strict '>' keeps the first maximum (row-major) on ties, as Chainer.
            wins = (cells > best) & inside
            best = xp.where(wins, cells, best)
            if track:
                step_won = xp.where(wins, step_dtype(step), step_won)
        if track:
            self.target = self._targets(xp, step_won, base, (y_start, x_start), (h, w, c),
                                        span_x)
        return xp.ascontiguousarray(xp.where(best == -numpy.inf, 0, best)  # empty bins: 0
                                    .transpose(0, 3, 1, 2)),

    @staticmethod
    def _targets(xp, step_won, base, starts, shape, span_x):
        """Flat indexes into x's (N * H * W * C) rows of each bin's winner (-1: none)."""
        h, w, c = shape
        y_start, x_start = starts
        step = step_won.astype(numpy.intp)
        y = xp.minimum(y_start[:, :, None, None] + step // span_x, h - 1)
        x_ = xp.minimum(x_start[:, None, :, None] + step % span_x, w - 1)
        target = ((base[..., None] + y * w + x_) * c + xp.arange(c))
        return xp.where(step_won >= 0, target, -1)

    def backward(self, indexes, grad_outputs):
        return _RoIPooling2DGrad(self.target, self.x_shape).apply(grad_outputs)


class _RoIPooling2DGrad(function_node.FunctionNode):
    """Scatter each output gradient to the input cell that won its bin (add.at)."""

    def __init__(self, target, x_shape):
        self.target = target
        self.x_shape = x_shape

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        n, c, h, w = self.x_shape
        won = self.target >= 0
        gx_rows = xp.zeros(n * h * w * c, dtype=gy.dtype)
        # NOTE: bins nobody won add a 0 to row 0 instead of being masked out (a boolean
        # mask would read the device back)
        xp.add.at(gx_rows, xp.where(won, self.target, 0),
                  xp.where(won, gy.transpose(0, 2, 3, 1), 0))
        return roi_arguments.rows_to_map(xp, gx_rows, self.x_shape),

    def backward(self, indexes, grad_outputs):
        return _RoIPooling2DGather(self.target, self.x_shape).apply(grad_outputs)


class _RoIPooling2DGather(function_node.FunctionNode):
    """Gather, for each bin, the input cell that won it (0 for empty bins)."""

    def __init__(self, target, x_shape):
        self.target = target
        self.x_shape = x_shape

    def forward(self, inputs):
        ggx, = inputs
        xp = backend.get_array_module(ggx)
        flat = roi_arguments.feature_rows(xp, ggx).ravel()
        ggy = xp.where(self.target >= 0, flat[xp.maximum(self.target, 0)], 0).astype(ggx.dtype)
        return xp.ascontiguousarray(ggy.transpose(0, 3, 1, 2)),

    def backward(self, indexes, grad_outputs):
        return _RoIPooling2DGrad(self.target, self.x_shape).apply(grad_outputs)


def roi_pooling_2d(x, rois, roi_indices, outsize, spatial_scale):
    """RoI pooling: the maximum of each bin of each RoI (Fast R-CNN's RoIPool).

    A RoI is scaled by ``spatial_scale`` and rounded to feature-map pixels; its
    (x_max - x_min + 1) x (y_max - y_min + 1) pixels are cut into out_H x out_W bins with
    edges floor(i * bin) and ceil((i + 1) * bin), clipped to the map; each output is the
    bin's maximum, 0 for an empty bin, as Chainer's roi_pooling_2d and Caffe's. The
    gradient goes to the winning cell, to x only (not the rois); double backprop is
    supported.

    Args:
        x (Variable or array): (N, C, H, W) float feature map.
        rois (array): (R, 4) float, (x_min, y_min, x_max, y_max) in image pixels (the
            cvzoo bbox order; Chainer used y first).
        roi_indices (array): (R,) int32, the batch index of each RoI.
        outsize (int or pair of int): (out_H, out_W) bins.
        spatial_scale (float): feature-map pixels per image pixel (1 / stride).

    Returns:
        Variable: (R, C, out_H, out_W), the dtype of x.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 3, 3]], dtype=np.float32)
    >>> roi_pooling_2d(x, rois, np.zeros(1, np.int32), 2, 1.0).array[0, 0]
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """
    # NOTE: the range of roi_indices is checked in forward, read with the bins' extent
    rois, roi_indices, outsize = roi_arguments.check_roi_arguments(
        'roi_pooling_2d', x, rois, roi_indices, outsize, spatial_scale, check_range=False)
    return RoIPooling2D(rois, roi_indices, outsize, spatial_scale).apply((x,))[0]
