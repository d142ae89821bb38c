import time

import numpy
import pytest

import cvzoo.core as C
import cvzoo.core.functions as F
from cvzoo.core import backprop
from cvzoo.testing import check_function


def _outsize(size, k, s, p, cover_all):
    if cover_all:
        return (size + 2 * p - k + s - 1) // s + 1
    return (size + 2 * p - k) // s + 1


def _reference(x, ksize, stride, pad, cover_all):
    """Max pooling and window-local argmax, one window at a time."""
    (kh, kw), (sy, sx), (py, px) = ksize, stride, pad
    n, c, h, w = x.shape
    oh, ow = _outsize(h, kh, sy, py, cover_all), _outsize(w, kw, sx, px, cover_all)
    y = numpy.empty((n, c, oh, ow), dtype=x.dtype)
    indexes = numpy.empty((n, c, oh, ow), dtype=numpy.int32)
    for i in range(oh):
        for j in range(ow):
            best = numpy.full((n, c), -numpy.inf)
            best_k = numpy.zeros((n, c), dtype=numpy.int32)
            for ky in range(kh):
                for kx in range(kw):
                    r, q = i * sy - py + ky, j * sx - px + kx
                    if 0 <= r < h and 0 <= q < w:
                        wins = x[:, :, r, q] > best
                        best = numpy.where(wins, x[:, :, r, q], best)
                        best_k[wins] = ky * kw + kx
            y[:, :, i, j], indexes[:, :, i, j] = best, best_k
    return y, indexes


def _distinct(rng, shape):
    """Values 0.1 apart in random order: no ties, far from the finite-difference step."""
    return (rng.permutation(int(numpy.prod(shape))).reshape(shape) * 0.1 - 1.0)


CASES = {
    'k2': ((2, 3, 4, 4), (2, 2), (2, 2), (0, 0), True),
    'k3s2p1_cover_all': ((2, 2, 6, 6), (3, 3), (2, 2), (1, 1), True),
    'k3s2p1_no_cover_all': ((2, 2, 6, 6), (3, 3), (2, 2), (1, 1), False),
    'k3s1p1_overlap': ((1, 2, 5, 5), (3, 3), (1, 1), (1, 1), False),
    'odd_rect': ((1, 2, 5, 7), (2, 3), (1, 2), (1, 0), True),
    'k3s3_overhang': ((1, 1, 7, 8), (3, 3), (3, 3), (0, 0), True),
    'empty_batch': ((0, 2, 4, 4), (2, 2), (2, 2), (0, 0), True),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_max_pooling_2d(case, rng):
    shape, ksize, stride, pad, cover_all = case
    x = _distinct(rng, shape)
    check_function(
        lambda x: F.max_pooling_2d(x, ksize, stride, pad, cover_all),
        (x,), lambda x: _reference(x, ksize, stride, pad, cover_all)[0],
        double_backward=True)


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_return_indices(case, rng):
    shape, ksize, stride, pad, cover_all = case
    x = _distinct(rng, shape).astype(numpy.float32)
    y, indexes = F.max_pooling_2d(x, ksize, stride, pad, cover_all, return_indices=True)
    want_y, want_indexes = _reference(x, ksize, stride, pad, cover_all)
    numpy.testing.assert_array_equal(y.array, want_y)
    numpy.testing.assert_array_equal(indexes, want_indexes)
    assert indexes.dtype == numpy.int32


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_inference_skips_the_winners_but_not_when_asked(case, rng):
    shape, ksize, stride, pad, cover_all = case
    x = _distinct(rng, shape).astype(numpy.float32)
    want_y, want_indexes = _reference(x, ksize, stride, pad, cover_all)
    with C.no_backprop_mode():
        y = F.max_pooling_2d(x, ksize, stride, pad, cover_all)
        y_kept, indexes = F.max_pooling_2d(x, ksize, stride, pad, cover_all,
                                           return_indices=True)
    numpy.testing.assert_array_equal(y.array, want_y)
    numpy.testing.assert_array_equal(y_kept.array, want_y)
    numpy.testing.assert_array_equal(indexes, want_indexes)


def test_stride_defaults_to_ksize_and_ties_go_to_first_cell():
    x = numpy.ones((1, 1, 4, 6), dtype=numpy.float32)
    y, indexes = F.max_pooling_2d(x, 2, return_indices=True)
    assert y.shape == (1, 1, 2, 3)
    assert (indexes == 0).all()


def test_padded_cells_never_win():
    x = -numpy.arange(1, 10, dtype=numpy.float32).reshape(1, 1, 3, 3)
    y = F.max_pooling_2d(x, 3, 1, 1, cover_all=False)
    assert (y.array < 0).all()
    assert y.array[0, 0, 0, 0] == -1


def test_non_contiguous_input(rng):
    base = _distinct(rng, (2, 5, 6, 3)).astype(numpy.float32)
    x = base.transpose(0, 3, 1, 2)
    y = F.max_pooling_2d(x, 3, 2, 1)
    numpy.testing.assert_array_equal(y.array, _reference(x, (3, 3), (2, 2), (1, 1), True)[0])


@pytest.mark.parametrize('kwargs, error', [
    (dict(ksize=0), ValueError),
    (dict(ksize=2.5), TypeError),
    (dict(ksize=2, pad=-1), ValueError),
    (dict(ksize=9, cover_all=False), ValueError),
], ids=['zero_ksize', 'float_ksize', 'negative_pad', 'window_larger_than_input'])
def test_invalid_arguments(kwargs, error):
    with pytest.raises(error):
        F.max_pooling_2d(numpy.zeros((1, 1, 4, 4), dtype=numpy.float32), **kwargs)


def test_rejects_bad_shape_and_dtype():
    with pytest.raises(ValueError, match='x must be'):
        F.max_pooling_2d(numpy.zeros((4, 4), dtype=numpy.float32), 2)
    with pytest.raises(TypeError, match='floating'):
        F.max_pooling_2d(numpy.zeros((1, 1, 4, 4), dtype=numpy.int32), 2)


TORCH_CASES = {k: c for k, c in CASES.items() if c[0][0] and 2 * max(c[3]) <= min(c[1])}


@pytest.mark.reference
@pytest.mark.parametrize('case', TORCH_CASES.values(), ids=list(TORCH_CASES))
def test_against_torch(case, rng):
    torch = pytest.importorskip('torch')
    shape, ksize, stride, pad, cover_all = case
    x = C.Variable(rng.standard_normal(shape).astype(numpy.float32))
    y = F.max_pooling_2d(x, ksize, stride, pad, cover_all)
    gy = rng.standard_normal(y.shape).astype(numpy.float32)
    gx, = backprop.grad([y], [x], [C.Variable(gy)])
    tx = torch.tensor(x.array, requires_grad=True)
    ty = torch.nn.functional.max_pool2d(tx, ksize, stride, pad, ceil_mode=cover_all)
    ty.backward(torch.from_numpy(gy))
    numpy.testing.assert_array_equal(y.array, ty.detach().numpy())
    numpy.testing.assert_allclose(gx.array, tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_resnet_stem_pool_speed():
    x = C.Variable(numpy.random.default_rng(0).standard_normal(
        (8, 64, 112, 112)).astype(numpy.float32))
    start = time.perf_counter()
    y = F.max_pooling_2d(x, 3, 2, 1, cover_all=False)
    y.grad = numpy.ones(y.shape, dtype=numpy.float32)
    y.backward()
    assert time.perf_counter() - start < 2.0
