"""roi_align_2d: RoIAlign (He et al., Mask R-CNN, ICCV 2017), torchvision's semantics.

Each bin of each RoI averages a grid of bilinear samples of the feature map. The op is
linear in x: it is a fixed weighted gather of feature-map rows, the *plan*, computed once
from the rois: one (row index, weight) pair per sample point and bilinear corner. Forward
gathers with the plan, backward scatters with it, and the scatter's gradient is the
gather again, so every order of derivative comes for free.
"""

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core.functions.vision import roi_arguments


def _axis_taps(xp, coord, size):
    """Bilinear taps along one axis, torchvision's rules.

    Returns ``[(index, weight), (index, weight)]``, int and float arrays shaped like
    ``coord``; samples more than one pixel outside the map get weight 0.
    """
    inside = (coord >= -1) & (coord <= size)
    coord = xp.clip(coord, 0, size - 1)
    low = xp.floor(coord).astype(numpy.intp)
    high = xp.minimum(low + 1, size - 1)
    frac = (coord - low) * inside
    return [(low, inside - frac), (high, frac)]


def _grid(rois, outsize, spatial_scale, sampling_ratio, aligned, xp):
    """Per-RoI start, bin size and sample-grid size along y and x (xp arrays)."""
    offset = 0.5 if aligned else 0.0
    boxes = rois.astype(numpy.float64) * spatial_scale - offset
    start = boxes[:, [1, 0]]  # (R, 2): y, x
    extent = boxes[:, [3, 2]] - start
    if not aligned:
        # NOTE: the legacy (aligned=False) RoIAlign forces rois to be at least 1 pixel.
        extent = xp.maximum(extent, 1.0)
    bin_size = extent / xp.asarray(outsize, dtype=numpy.float64)
    if sampling_ratio is not None and sampling_ratio > 0:
        n_sample = xp.full(extent.shape, sampling_ratio, dtype=numpy.intp)
    else:
        n_sample = xp.ceil(bin_size).astype(numpy.intp)  # adaptive: ceil(roi / outsize)
    return start, bin_size, n_sample


def make_plan(x_shape, rois, roi_indices, outsize, spatial_scale, sampling_ratio, aligned):
    """The sampling plan: per-axis bilinear taps of every sample of every bin.

    Returns ``(base, taps_y, taps_x, count)``; ``plan_terms`` expands it into (row index,
    weight) pairs. Only the per-axis taps are kept, so the plan stays small even for
    large adaptive grids. A loop over the sample points of a bin; RoIs and bins are
    vectorised. Rows index the (N * H * W, C) layout of x.
    """
    xp = backend.get_array_module(rois)
    _, _, h, w = x_shape
    start, bin_size, n_sample = _grid(rois, outsize, spatial_scale, sampling_ratio, aligned,
                                      xp)
    count = xp.maximum(n_sample[:, 0] * n_sample[:, 1], 1)[:, None, None]
    base = (roi_indices.astype(numpy.intp) * (h * w))[:, None, None]
    bins = [xp.arange(k, dtype=numpy.float64)[None, :] for k in outsize]
    if not len(rois):
        max_y = max_x = 0
    elif sampling_ratio is not None and sampling_ratio > 0:
        max_y = max_x = int(sampling_ratio)  # known without reading the device
    else:
        max_y, max_x = roi_arguments.read_ints(n_sample[:, 0].max(), n_sample[:, 1].max())
    # NOTE: sample (iy, ix) of a bin reads the 2 x 2 corners (y tap) x (x tap), and its
    # weight factors as weight_y * weight_x, so the plan is the product of the per-axis
    # taps of all samples (weights of samples a RoI does not use are 0).
    taps_y = [tap for i in range(max_y) for tap in _sample_taps(
        xp, start[:, 0:1], bin_size[:, 0:1], bins[0], i, n_sample[:, 0:1], h)]
    taps_x = [tap for i in range(max_x) for tap in _sample_taps(
        xp, start[:, 1:2], bin_size[:, 1:2], bins[1], i, n_sample[:, 1:2], w)]
    return base, taps_y, taps_x, count


def plan_terms(plan, width, dtype):
    """Yield ``(row index, weight)``, both (R, out_H, out_W), one per sample corner."""
    base, taps_y, taps_x, count = plan
    for row, weight_y in taps_y:
        for col, weight_x in taps_x:
            weight = weight_y[:, :, None] * weight_x[:, None, :] / count
            yield base + row[:, :, None] * width + col[:, None, :], weight.astype(dtype)


def _sample_taps(xp, start, bin_size, bins, i, n_sample, size):
    """Taps of the i-th sample of every bin along one axis; (R, out) arrays."""
    coord = start + bins * bin_size + (i + 0.5) * bin_size / xp.maximum(n_sample, 1)
    taps = _axis_taps(xp, coord, size)
    used = i < n_sample  # RoIs with fewer samples skip this one
    return [(index, weight * used) for index, weight in taps]


class RoIAlign2D(function_node.FunctionNode):
    """Gather with a plan: y[r, :, i, j] = sum of weight * x_row[index] over the plan."""

    def __init__(self, plan, n_roi, outsize):
        self.plan = plan
        self.n_roi = n_roi
        self.outsize = outsize

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.x_shape = x.shape
        rows = roi_arguments.feature_rows(xp, x)
        y = xp.zeros((self.n_roi,) + self.outsize + (x.shape[1],), dtype=x.dtype)
        for index, weight in plan_terms(self.plan, x.shape[3], x.dtype):
            y += rows[index] * weight[..., None]
        return xp.ascontiguousarray(y.transpose(0, 3, 1, 2)),

    def backward(self, indexes, grad_outputs):
        return _RoIAlign2DGrad(self.plan, self.x_shape).apply(grad_outputs)


class _RoIAlign2DGrad(function_node.FunctionNode):
    """Scatter with a plan (the adjoint gather), by add.at into the rows of x."""

    def __init__(self, plan, x_shape):
        self.plan = plan
        self.x_shape = x_shape

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        n, c, h, w = self.x_shape
        self.n_roi, self.outsize = gy.shape[0], gy.shape[2:]
        gy_rows = gy.transpose(0, 2, 3, 1)
        gx_rows = xp.zeros(n * h * w * c, dtype=gy.dtype)
        channels = xp.arange(c)
        for index, weight in plan_terms(self.plan, w, gy.dtype):
            # NOTE: add.at on a flat array with flat indexes is several times faster than
            # add.at of whole rows into a 2-D array.
            flat_index = index[..., None] * c + channels
            xp.add.at(gx_rows, flat_index.ravel(), (gy_rows * weight[..., None]).ravel())
        return roi_arguments.rows_to_map(xp, gx_rows, self.x_shape),

    def backward(self, indexes, grad_outputs):
        return RoIAlign2D(self.plan, self.n_roi, self.outsize).apply(grad_outputs)


def roi_align_2d(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio=None,
                 aligned=False, *, index_range=None):
    """RoIAlign: average bilinear samples over each bin of each RoI.

    As torchvision.ops.roi_align (He et al., "Mask R-CNN", ICCV 2017). A RoI is scaled
    by ``spatial_scale`` into feature-map pixels (shifted by -0.5 when ``aligned``; the
    legacy ``aligned=False`` makes it at least 1 x 1) and cut into out_H x out_W bins;
    each bin averages a grid of sampling_ratio x sampling_ratio bilinear samples (with
    ``sampling_ratio`` None or <= 0: ceil(roi_size / outsize) per axis and RoI). Samples
    more than one pixel outside the map count as 0. The gradient flows to x only, not to
    the rois; double backprop is supported.

    Args:
        x (Variable or array): (N, C, H, W) float feature map.
        rois (array): (R, 4) float, (x_min, y_min, x_max, y_max) in image pixels (the
            cvzoo bbox order; ChainerCV used y first).
        roi_indices (array): (R,) int32, the batch index of each RoI.
        outsize (int or pair of int): (out_H, out_W) bins.
        spatial_scale (float): feature-map pixels per image pixel (1 / stride).
        sampling_ratio (int or None): samples per bin and axis; None or <= 0: adaptive.
        aligned (bool): shift by -0.5 pixel to align pixel centres (Detectron2's
            ROIAlignV2).
        index_range (pair of int or None): ``(low, high)``, bounds of ``roi_indices``
            the caller has already read from the device (with what else it reads, e.g.
            once for the calls of all FPN levels); they are checked against the batch
            instead of reading ``roi_indices`` back, a host sync on a GPU.

    Returns:
        Variable: (R, C, out_H, out_W), the dtype of x.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 4, 4]], dtype=np.float32)
    >>> roi_align_2d(x, rois, np.zeros(1, np.int32), 1, 1.0, aligned=True).array.ravel()
    array([7.5], dtype=float32)
    """
    rois, roi_indices, outsize = roi_arguments.check_roi_arguments(
        'roi_align_2d', x, rois, roi_indices, outsize, spatial_scale,
        check_range=index_range is None)
    if index_range is not None and len(roi_indices):
        roi_arguments.check_index_range('roi_align_2d', *index_range, x.shape[0])
    if sampling_ratio is not None and (isinstance(sampling_ratio, bool)
                                       or not isinstance(sampling_ratio, (int, numpy.integer))):
        raise TypeError(f'roi_align_2d: sampling_ratio must be an int or None, got '
                        f'{sampling_ratio!r}')
    plan = make_plan(x.shape, rois, roi_indices, outsize, spatial_scale, sampling_ratio,
                     bool(aligned))
    return RoIAlign2D(plan, len(rois), outsize).apply((x,))[0]
