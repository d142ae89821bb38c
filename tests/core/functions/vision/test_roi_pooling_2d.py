import math

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _reference(x, rois, roi_indices, outsize, spatial_scale):
    """Fast R-CNN RoI max pooling, one RoI and one bin at a time."""
    n, c, h, w = x.shape
    out_h, out_w = outsize
    y = numpy.zeros((len(rois), c, out_h, out_w), dtype=x.dtype)
    for r, (roi, b) in enumerate(zip(rois, roi_indices)):
        x_min, y_min, x_max, y_max = [math.floor(v * spatial_scale + 0.5) for v in roi]
        bin_h = max(y_max - y_min + 1, 1) / out_h
        bin_w = max(x_max - x_min + 1, 1) / out_w
        for i in range(out_h):
            for j in range(out_w):
                top = min(max(math.floor(i * bin_h) + y_min, 0), h)
                bottom = min(max(math.ceil((i + 1) * bin_h) + y_min, 0), h)
                left = min(max(math.floor(j * bin_w) + x_min, 0), w)
                right = min(max(math.ceil((j + 1) * bin_w) + x_min, 0), w)
                if bottom > top and right > left:
                    y[r, :, i, j] = x[b, :, top:bottom, left:right].max(axis=(1, 2))
    return y


def _distinct(rng, shape):
    return rng.permutation(int(numpy.prod(shape))).reshape(shape) * 0.1 - 2.0


ROIS = numpy.array([[0, 0, 11, 9], [2.4, 1.2, 7.7, 8.9], [5, 3, 5, 3],
                    [-4, -3, 6, 4], [6, 5, 20, 30]], dtype=numpy.float32)
CASES = {
    'scale_1_out_2x3': (ROIS, numpy.array([0, 1, 1, 0, 1]), (2, 3), 1.0),
    'scale_half_out_3': (ROIS * 2, numpy.array([1, 0, 0, 1, 0]), (3, 3), 0.5),
    'out_1': (ROIS, numpy.array([0, 0, 1, 1, 0]), (1, 1), 1.0),
    'bins_smaller_than_pixels': (ROIS[1:3], numpy.array([0, 1]), (4, 4), 1.0),
    'no_rois': (ROIS[:0], numpy.zeros(0, int), (2, 2), 1.0),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_roi_pooling_2d(case, rng):
    rois, roi_indices, outsize, spatial_scale = case
    x = _distinct(rng, (2, 2, 10, 12))
    check_function(
        lambda x, rois, roi_indices: F.roi_pooling_2d(x, rois, roi_indices, outsize,
                                                      spatial_scale),
        (x, rois, roi_indices.astype(numpy.int32)),
        lambda x, rois, roi_indices: _reference(x, rois, roi_indices, outsize, spatial_scale),
        no_grads=(False, True, True), double_backward=True)


def test_whole_map_with_outsize_1_is_global_max(rng):
    x = rng.standard_normal((2, 3, 5, 6)).astype(numpy.float32)
    rois = numpy.array([[0, 0, 5, 4], [0, 0, 5, 4]], dtype=numpy.float32)
    y = F.roi_pooling_2d(x, rois, numpy.array([1, 0], numpy.int32), 1, 1.0)
    numpy.testing.assert_array_equal(y.array[:, :, 0, 0], x.max(axis=(2, 3))[[1, 0]])


def test_hand_computed_bins_and_empty_bins():
    x = numpy.arange(16, dtype=numpy.float32).reshape(1, 1, 4, 4)
    # A RoI entirely outside the map gives empty bins: 0, and no gradient.
    rois = numpy.array([[0, 0, 1, 1], [10, 10, 12, 12]], dtype=numpy.float32)
    y = F.roi_pooling_2d(x, rois, numpy.zeros(2, numpy.int32), 2, 1.0)
    numpy.testing.assert_array_equal(y.array[0, 0], [[0, 1], [4, 5]])
    numpy.testing.assert_array_equal(y.array[1], 0)


@pytest.mark.parametrize('kwargs, match', [
    (dict(rois=numpy.zeros((2, 5), numpy.float32)), 'rois'),
    (dict(roi_indices=numpy.zeros(3, numpy.int32)), 'roi_indices'),
    (dict(roi_indices=numpy.array([0, 2], numpy.int32)), 'batch'),
    (dict(outsize=0), 'outsize'),
    (dict(spatial_scale=0), 'spatial_scale'),
], ids=['rois_shape', 'roi_indices_shape', 'roi_indices_range', 'outsize', 'scale'])
def test_invalid_arguments(kwargs, match):
    args = dict(x=numpy.zeros((2, 1, 4, 4), numpy.float32),
                rois=numpy.zeros((2, 4), numpy.float32),
                roi_indices=numpy.zeros(2, numpy.int32), outsize=2, spatial_scale=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        F.roi_pooling_2d(**args)


def test_inference_mode_gives_the_same_output():
    """Without backprop the winners are not tracked; the pooled values must not change."""
    from cvzoo.core import config

    rng = numpy.random.default_rng(3)
    x = rng.standard_normal((2, 3, 9, 11)).astype(numpy.float32)
    rois = numpy.array([[0, 0, 10, 8], [2, 1, 6, 5], [3, 3, 3, 3], [20, 20, 30, 30]],
                       numpy.float32)  # the last one lies outside the map: empty bins
    indices = numpy.array([0, 1, 0, 1], numpy.int32)
    tracked = F.roi_pooling_2d(x, rois, indices, (3, 4), 1.0).array
    with config.no_backprop_mode():
        untracked = F.roi_pooling_2d(x, rois, indices, (3, 4), 1.0).array
    numpy.testing.assert_array_equal(untracked, tracked)
    assert (tracked[3] == 0).all()
