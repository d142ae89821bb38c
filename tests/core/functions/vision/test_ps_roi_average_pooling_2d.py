import math

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def _reference(x, rois, roi_indices, outsize, spatial_scale, group_size):
    """Pool one RoI, class channel and bin at a time (the rules of the FCIS kernel)."""
    out_h, out_w = outsize
    n_roi, (_, c, h, w) = len(rois), x.shape
    out_c = c // (group_size * group_size)
    y = numpy.zeros((n_roi, out_c, out_h, out_w), dtype=x.dtype)
    for r in range(n_roi):
        x_min, y_min, x_max, y_max = rois[r].astype(numpy.float64) * spatial_scale
        bin_h = max(y_max - y_min, 0.1) / out_h
        bin_w = max(x_max - x_min, 0.1) / out_w
        for i in range(out_h):
            y0 = min(max(math.floor(i * bin_h + y_min), 0), h)
            y1 = min(max(math.ceil((i + 1) * bin_h + y_min), 0), h)
            for j in range(out_w):
                x0 = min(max(math.floor(j * bin_w + x_min), 0), w)
                x1 = min(max(math.ceil((j + 1) * bin_w + x_min), 0), w)
                if y0 >= y1 or x0 >= x1:
                    continue
                group_y = min(math.floor(i * group_size / out_h), group_size - 1)
                group_x = min(math.floor(j * group_size / out_w), group_size - 1)
                for k in range(out_c):
                    channel = (k * group_size + group_y) * group_size + group_x
                    y[r, k, i, j] = x[roi_indices[r], channel, y0:y1, x0:x1].mean()
    return y


# (x_min, y_min, x_max, y_max); bin edges kept off integers so that finite differences
# of the float64 check never see a bound move.
ROIS = numpy.array([[0.3, 0.2, 11.1, 9.3], [2.4, 1.2, 7.7, 8.9], [5.1, 3.2, 5.2, 3.25],
                    [-4.2, -3.1, 6.3, 4.2], [6.1, 5.3, 20.2, 30.4], [13.2, 1.1, 15.3, 4.4]],
                   dtype=numpy.float32)
CASES = {
    'group_2_out_2': (ROIS, [0, 1, 1, 0, 1, 0], (2, 2), 1.0, 2),
    'group_2_out_3x5': (ROIS, [1, 0, 0, 1, 0, 1], (3, 5), 1.0, 2),
    'group_3_out_6_scale_half': (ROIS * 2, [0, 1, 0, 1, 1, 0], (6, 6), 0.5, 3),
    'group_1_out_1': (ROIS, [0, 0, 1, 1, 0, 1], (1, 1), 1.0, 1),
    'no_rois': (ROIS[:0], [], (2, 2), 1.0, 2),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_ps_roi_average_pooling_2d(case, rng):
    rois, roi_indices, outsize, spatial_scale, group_size = case
    x = rng.standard_normal((2, 2 * group_size ** 2, 10, 12))

    def func(x, rois, roi_indices):
        return F.ps_roi_average_pooling_2d(x, rois, roi_indices, outsize, spatial_scale,
                                           group_size)

    def expected(x, rois, roi_indices):
        return _reference(x, rois, roi_indices, outsize, spatial_scale, group_size)

    check_function(func, (x, rois, numpy.array(roi_indices, dtype=numpy.int32)), expected,
                   no_grads=(False, True, True), double_backward=True)


def test_fcis_layout_21_bins_group_7(device, rng):
    # FCIS's use: 21 x 21 bins in 7 x 7 groups of 3 x 3, two classes, a 1/16 scale.
    x = rng.standard_normal((1, 2 * 49, 20, 24)).astype(numpy.float32)
    rois = numpy.array([[10.5, 20.1, 300.2, 250.7], [0, 0, 16, 16], [100, 90, 101, 92]],
                       dtype=numpy.float32)
    roi_indices = numpy.zeros(3, numpy.int32)
    y = F.ps_roi_average_pooling_2d(backend.to_device(x, device),
                                    backend.to_device(rois, device),
                                    backend.to_device(roi_indices, device), (2, 21, 21),
                                    1 / 16, 7)
    assert y.shape == (3, 2, 21, 21) and y.dtype == numpy.float32
    numpy.testing.assert_allclose(backend.to_numpy(y.array),
                                  _reference(x, rois, roi_indices, (21, 21), 1 / 16, 7),
                                  rtol=1e-5, atol=1e-6)


def test_whole_map_in_one_bin_per_group_is_the_mean(rng):
    x = rng.standard_normal((1, 4, 6, 8)).astype(numpy.float32)
    rois = numpy.array([[0, 0, 8, 6]], dtype=numpy.float32)
    y = F.ps_roi_average_pooling_2d(x, rois, numpy.zeros(1, numpy.int32), 1, 1.0, 1)
    numpy.testing.assert_allclose(y.array[0, :, 0, 0], x[0].mean(axis=(1, 2)), rtol=1e-5)


@pytest.mark.reference
def test_equals_chainercv(chainercv_reference, tmp_path, rng):
    x = rng.standard_normal((2, 3 * 49, 30, 40)).astype(numpy.float32)
    corner = rng.uniform(-40, 600, (40, 2))
    size = rng.uniform(1, 300, (40, 2))
    rois = numpy.concatenate([corner, corner + size], axis=1).astype(numpy.float32)
    roi_indices = rng.integers(0, 2, 40).astype(numpy.int32)
    gy = rng.standard_normal((40, 3, 21, 21)).astype(numpy.float32)
    script = (
        'import chainer\n'
        'from chainercv.functions import ps_roi_average_pooling_2d\n'
        'x = chainer.Variable(INPUTS["x"])\n'
        'y = ps_roi_average_pooling_2d(x, INPUTS["rois"], INPUTS["roi_indices"], '
        '(3, 21, 21), 1 / 16, 7)\n'
        'y.grad = INPUTS["gy"]\n'
        'y.backward()\n'
        'OUTPUTS["y"] = y.array\n'
        'OUTPUTS["gx"] = x.grad\n')
    outputs = chainercv_reference.run(script, tmp_path, x=x, rois=rois[:, [1, 0, 3, 2]],
                                      roi_indices=roi_indices, gy=gy)
    x_variable = Variable(x)
    y = F.ps_roi_average_pooling_2d(x_variable, rois, roi_indices, (3, 21, 21), 1 / 16, 7)
    y.grad = gy
    y.backward()
    numpy.testing.assert_allclose(y.array, outputs['y'], rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(x_variable.grad, outputs['gx'], rtol=1e-5, atol=1e-5)


def test_index_range_read_by_the_caller(rng):
    x = rng.standard_normal((2, 8, 6, 6)).astype(numpy.float32)
    rois = numpy.array([[0, 0, 4, 4], [1, 2, 6, 5]], numpy.float32)
    roi_indices = numpy.array([1, 0], numpy.int32)
    want = F.ps_roi_average_pooling_2d(x, rois, roi_indices, 2, 1.0, 2).array
    got = F.ps_roi_average_pooling_2d(x, rois, roi_indices, 2, 1.0, 2, index_range=(0, 1))
    numpy.testing.assert_array_equal(got.array, want)
    with pytest.raises(ValueError, match='roi_indices must lie'):
        F.ps_roi_average_pooling_2d(x, rois, roi_indices, 2, 1.0, 2, index_range=(0, 2))


@pytest.mark.parametrize('kwargs, message', [
    (dict(x=numpy.zeros((1, 6, 4, 4), numpy.float32)), 'group_size \\*\\* 2'),
    (dict(outsize=(3, 2, 2)), r'outsize\[0\] \* group_size'),
    (dict(outsize=(0, 2, 2)), r'outsize\[0\]'),
    (dict(group_size=0), 'group_size'),
    (dict(x=numpy.zeros((4, 4, 4), numpy.float32)), 'x must be'),
    (dict(rois=numpy.zeros((1, 5), numpy.float32)), 'rois must be'),
    (dict(roi_indices=numpy.zeros(2, numpy.int32)), 'roi_indices must be'),
    (dict(roi_indices=numpy.array([3], numpy.int32)), 'roi_indices must lie'),
    (dict(spatial_scale=0), 'spatial_scale'),
])
def test_bad_arguments_are_named(kwargs, message):
    arguments = dict(x=numpy.zeros((1, 4, 4, 4), numpy.float32),
                     rois=numpy.zeros((1, 4), numpy.float32),
                     roi_indices=numpy.zeros(1, numpy.int32), outsize=2, spatial_scale=1.0,
                     group_size=2)
    arguments.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=message):
        F.ps_roi_average_pooling_2d(**arguments)
