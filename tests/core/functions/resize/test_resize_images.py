import math

import numpy
import pytest

import cvzoo.core as C
import cvzoo.core.functions as F
from cvzoo.core import backprop
from cvzoo.testing import check_function


def _source(i, n_in, n_out, align_corners):
    if align_corners:
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return max((i + 0.5) * n_in / n_out - 0.5, 0.0)


def _taps(i, n_in, n_out, align_corners):
    """[(input index, weight)] of output line i, computed one pixel at a time."""
    u = min(_source(i, n_in, n_out, align_corners), n_in - 1)
    low = math.floor(u)
    return [(low, 1 - (u - low)), (min(low + 1, n_in - 1), u - low)]


def _bilinear(x, output_shape, align_corners):
    n, c, h, w = x.shape
    out_h, out_w = output_shape
    y = numpy.zeros((n, c, out_h, out_w), dtype=x.dtype)
    for i in range(out_h):
        for j in range(out_w):
            for r, a in _taps(i, h, out_h, align_corners):
                for q, b in _taps(j, w, out_w, align_corners):
                    y[:, :, i, j] += a * b * x[:, :, r, q]
    return y


def _nearest(x, output_shape, align_corners):
    n, c, h, w = x.shape
    if align_corners:
        rows = [min(math.floor(_source(i, h, output_shape[0], True) + 0.5), h - 1)
                for i in range(output_shape[0])]
        cols = [min(math.floor(_source(j, w, output_shape[1], True) + 0.5), w - 1)
                for j in range(output_shape[1])]
    else:
        rows = [min(i * h // output_shape[0], h - 1) for i in range(output_shape[0])]
        cols = [min(j * w // output_shape[1], w - 1) for j in range(output_shape[1])]
    return x[:, :, rows][:, :, :, cols]


REFERENCES = {'bilinear': _bilinear, 'nearest': _nearest}
CASES = {
    'up': ((2, 3, 3, 4), (5, 7)),
    'down': ((1, 2, 6, 5), (3, 2)),
    'mixed': ((1, 2, 4, 3), (2, 6)),
    'to_one_pixel': ((1, 1, 3, 4), (1, 1)),
    'from_one_pixel': ((1, 2, 1, 1), (3, 2)),
    'same_size': ((1, 2, 3, 4), (3, 4)),
    'empty_batch': ((0, 2, 3, 3), (4, 5)),
}


@pytest.mark.parametrize('align_corners', [True, False], ids=['align', 'half_pixel'])
@pytest.mark.parametrize('mode', ['bilinear', 'nearest'])
@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_resize_images(case, mode, align_corners, rng):
    shape, output_shape = case
    x = rng.standard_normal(shape)
    check_function(lambda x: F.resize_images(x, output_shape, mode, align_corners),
                   (x,), lambda x: REFERENCES[mode](x, output_shape, align_corners),
                   double_backward=True)


@pytest.mark.parametrize('mode', ['bilinear', 'nearest'])
@pytest.mark.parametrize('align_corners', [True, False], ids=['align', 'half_pixel'])
def test_identity_when_sizes_match(mode, align_corners, rng):
    x = rng.standard_normal((2, 3, 5, 4)).astype(numpy.float32)
    y = F.resize_images(x, (5, 4), mode, align_corners)
    numpy.testing.assert_array_equal(y.array, x)


def test_hand_computed_cases():
    x = numpy.array([[[[0, 2], [4, 6]]]], dtype=numpy.float32)
    # align_corners: corners kept, midpoints averaged.
    numpy.testing.assert_allclose(F.resize_images(x, (3, 3)).array[0, 0],
                                  [[0, 1, 2], [2, 3, 4], [4, 5, 6]])
    # half-pixel centres at 2x: samples at -0.25 (clamped to 0), 0.25, 0.75, 1.25 (-> 1).
    numpy.testing.assert_allclose(
        F.resize_images(x[:, :, :1], (1, 4), align_corners=False).array[0, 0],
        [[0, 0.5, 1.5, 2]])
    numpy.testing.assert_allclose(
        F.resize_images(x, (1, 1), align_corners=False).array.ravel(), [3])
    numpy.testing.assert_allclose(F.resize_images(x, (1, 1)).array.ravel(), [0])


def test_keeps_float32_and_non_contiguous_input(rng):
    base = rng.standard_normal((2, 5, 4, 3)).astype(numpy.float32)
    x = base.transpose(0, 3, 1, 2)
    y = F.resize_images(x, (7, 3))
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose(y.array, _bilinear(x, (7, 3), True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('kwargs, error', [
    (dict(output_shape=(0, 3)), ValueError),
    (dict(output_shape=5), ValueError),
    (dict(output_shape=(2, 2), mode='bicubic'), ValueError),
], ids=['zero_size', 'not_a_pair', 'unknown_mode'])
def test_invalid_arguments(kwargs, error):
    with pytest.raises(error):
        F.resize_images(numpy.zeros((1, 1, 2, 2), dtype=numpy.float32), **kwargs)


@pytest.mark.reference
@pytest.mark.parametrize('mode, align_corners', [
    ('bilinear', True), ('bilinear', False), ('nearest', False)],
    ids=['bilinear_align', 'bilinear_half_pixel', 'nearest'])
@pytest.mark.parametrize('output_shape', [(11, 9), (3, 2), (6, 12)])
def test_against_torch(mode, align_corners, output_shape, rng):
    torch = pytest.importorskip('torch')
    x = C.Variable(rng.standard_normal((2, 3, 6, 5)).astype(numpy.float32))
    y = F.resize_images(x, output_shape, mode, align_corners)
    gy = rng.standard_normal(y.shape).astype(numpy.float32)
    gx, = backprop.grad([y], [x], [C.Variable(gy)])
    tx = torch.tensor(x.array, requires_grad=True)
    kwargs = dict(align_corners=align_corners) if mode == 'bilinear' else {}
    ty = torch.nn.functional.interpolate(tx, size=output_shape, mode=mode, **kwargs)
    ty.backward(torch.from_numpy(gy))
    numpy.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(gx.array, tx.grad.numpy(), rtol=1e-5, atol=1e-5)
