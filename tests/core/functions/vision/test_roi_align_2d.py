import math

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _bilinear(feature, y, x):
    """torchvision's bilinear sample of one (C, H, W) map at (y, x)."""
    c, h, w = feature.shape
    if y < -1 or y > h or x < -1 or x > w:
        return numpy.zeros(c)
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= h - 1:
        y_low = y_high = h - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= w - 1:
        x_low = x_high = w - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    return ((1 - ly) * (1 - lx) * feature[:, y_low, x_low]
            + (1 - ly) * lx * feature[:, y_low, x_high]
            + ly * (1 - lx) * feature[:, y_high, x_low] + ly * lx * feature[:, y_high, x_high])


def _reference(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio, aligned):
    """RoIAlign one RoI, bin and sample at a time (torchvision's CPU kernel rules)."""
    out_h, out_w = outsize
    y = numpy.zeros((len(rois), x.shape[1], out_h, out_w))
    offset = 0.5 if aligned else 0.0
    for r, (roi, b) in enumerate(zip(rois.astype(numpy.float64), roi_indices)):
        x0, y0, x1, y1 = roi * spatial_scale - offset
        roi_w, roi_h = x1 - x0, y1 - y0
        if not aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / out_h, roi_w / out_w
        grid_h = sampling_ratio if sampling_ratio and sampling_ratio > 0 else math.ceil(bin_h)
        grid_w = sampling_ratio if sampling_ratio and sampling_ratio > 0 else math.ceil(bin_w)
        count = max(grid_h * grid_w, 1)
        for i in range(out_h):
            for j in range(out_w):
                for iy in range(grid_h):
                    for ix in range(grid_w):
                        sy = y0 + i * bin_h + (iy + 0.5) * bin_h / grid_h
                        sx = x0 + j * bin_w + (ix + 0.5) * bin_w / grid_w
                        y[r, :, i, j] += _bilinear(x[b], sy, sx) / count
    return y.astype(x.dtype)


ROIS = numpy.array([[0, 0, 11, 9], [2.4, 1.2, 7.7, 8.9], [5, 3, 5.2, 3.1],
                    [-4, -3, 6, 4], [6, 5, 20, 30]], dtype=numpy.float32)
CASES = {
    'adaptive': (ROIS, [0, 1, 1, 0, 1], (2, 3), 1.0, None, False),
    'adaptive_aligned': (ROIS, [0, 1, 1, 0, 1], (2, 3), 1.0, None, True),
    'sampling_2_scale_half': (ROIS * 2, [1, 0, 0, 1, 0], (3, 3), 0.5, 2, False),
    'sampling_1_aligned': (ROIS, [1, 0, 0, 1, 0], (2, 2), 1.0, 1, True),
    'sampling_0_is_adaptive': (ROIS[:3], [0, 1, 0], (2, 2), 1.0, 0, True),
    'out_1': (ROIS, [0, 0, 1, 1, 0], (1, 1), 1.0, None, False),
    'no_rois': (ROIS[:0], [], (2, 2), 1.0, 2, False),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_roi_align_2d(case, rng):
    rois, roi_indices, outsize, spatial_scale, sampling_ratio, aligned = case
    x = rng.standard_normal((2, 2, 10, 12))

    def func(x, rois, roi_indices):
        return F.roi_align_2d(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio,
                              aligned)

    def expected(x, rois, roi_indices):
        return _reference(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio,
                          aligned)

    check_function(func, (x, rois, numpy.array(roi_indices, dtype=numpy.int32)), expected,
                   no_grads=(False, True, True), double_backward=True)


def test_whole_map_with_outsize_1_is_the_mean(rng):
    x = rng.standard_normal((2, 3, 4, 6)).astype(numpy.float32)
    rois = numpy.array([[0, 0, 6, 4]], dtype=numpy.float32)
    # aligned: the RoI spans the pixel edges; 2 x 2 bins of 2 x 2 samples hit every centre.
    y = F.roi_align_2d(x, rois, numpy.array([1], numpy.int32), (2, 3), 1.0, sampling_ratio=2,
                       aligned=True)
    numpy.testing.assert_allclose(y.array.mean(axis=(2, 3))[0], x[1].mean(axis=(1, 2)),
                                  rtol=1e-5, atol=1e-6)


def test_hand_computed_sample():
    x = numpy.arange(16, dtype=numpy.float32).reshape(1, 1, 4, 4)  # x[i, j] = 4 i + j
    # One sample at the centre of the RoI (1, 1)-(2, 3): at (y, x) = (2, 1.5) -> 9.5.
    rois = numpy.array([[1, 1, 2, 3]], dtype=numpy.float32)
    y = F.roi_align_2d(x, rois, numpy.zeros(1, numpy.int32), 1, 1.0, sampling_ratio=1)
    numpy.testing.assert_allclose(y.array.ravel(), [9.5])
    # Samples beyond one pixel outside the map are 0.
    far = numpy.array([[10, 10, 12, 12]], dtype=numpy.float32)
    y = F.roi_align_2d(x, far, numpy.zeros(1, numpy.int32), 2, 1.0)
    numpy.testing.assert_array_equal(y.array, 0)


def test_invalid_sampling_ratio():
    with pytest.raises(TypeError, match='sampling_ratio'):
        F.roi_align_2d(numpy.zeros((1, 1, 4, 4), numpy.float32),
                       numpy.zeros((1, 4), numpy.float32), numpy.zeros(1, numpy.int32), 2,
                       1.0, sampling_ratio=1.5)
