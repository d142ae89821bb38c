import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _reference(x, indexes, ksize, stride, pad, outsize):
    """Put each value at its window's recorded cell, one value at a time."""
    (_, kw), (sy, sx), (py, px) = ksize, stride, pad
    y = numpy.zeros(x.shape[:2] + tuple(outsize), dtype=x.dtype)
    for b, c, i, j in numpy.ndindex(*x.shape):
        ky, kx = divmod(int(indexes[b, c, i, j]), kw)
        r, q = i * sy - py + ky, j * sx - px + kx
        if 0 <= r < outsize[0] and 0 <= q < outsize[1]:
            y[b, c, r, q] += x[b, c, i, j]
    return y


CASES = {
    'k2': ((2, 3, 2, 2), (2, 2), (2, 2), (0, 0), True, (4, 4)),
    'k3s2p1_overlap': ((2, 2, 3, 3), (3, 3), (2, 2), (1, 1), True, (5, 5)),
    'k3s2p1_no_cover_all': ((1, 2, 3, 3), (3, 3), (2, 2), (1, 1), False, (5, 6)),
    'odd_rect': ((1, 2, 3, 3), (2, 3), (1, 2), (1, 0), True, (2, 6)),
    'default_outsize': ((1, 1, 3, 3), (2, 2), (2, 2), (0, 0), True, None),
    'empty_batch': ((0, 2, 2, 2), (2, 2), (2, 2), (0, 0), True, (4, 4)),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_upsampling_2d(case, rng):
    shape, ksize, stride, pad, cover_all, outsize = case
    indexes = rng.integers(0, ksize[0] * ksize[1], shape).astype(numpy.int32)
    want_size = outsize or (5, 5)
    x = rng.standard_normal(shape)
    check_function(
        lambda x: F.upsampling_2d(x, indexes, ksize, stride, pad, outsize, cover_all),
        (x,), lambda x: _reference(x, indexes, ksize, stride, pad, want_size),
        double_backward=True)


@pytest.mark.parametrize('pool', [(2, 2, 0, True), (3, 3, 0, True), (2, 2, 1, False)],
                         ids=['k2', 'k3_cover_all', 'k2p1'])
def test_round_trip_with_max_pooling_indices(pool, rng):
    ksize, stride, pad, cover_all = pool
    x = rng.permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6).astype(numpy.float32) + 1
    y, indexes = F.max_pooling_2d(x, ksize, stride, pad, cover_all, return_indices=True)
    up = F.upsampling_2d(y, indexes, ksize, stride, pad, outsize=(7, 6),
                         cover_all=cover_all).array
    # Non-overlapping windows: each maximum is back at its place, zeros elsewhere.
    kept = up != 0
    numpy.testing.assert_array_equal(up[kept], x[kept])
    assert kept.sum() == y.size
    numpy.testing.assert_array_equal(F.max_pooling_2d(up, ksize, stride, pad, cover_all).array,
                                     y.array)


def test_overlapping_windows_add_up_at_a_shared_maximum():
    x = numpy.zeros((1, 1, 3, 5), dtype=numpy.float32)
    x[0, 0, 1, 2] = 1
    y, indexes = F.max_pooling_2d(x, 3, 1, 0, return_indices=True)
    assert y.shape == (1, 1, 1, 3)
    up = F.upsampling_2d(y, indexes, 3, 1, 0, outsize=(3, 5)).array
    assert up[0, 0, 1, 2] == 3 and up.sum() == 3


def test_rejects_bad_indexes():
    x = numpy.zeros((1, 1, 2, 2), dtype=numpy.float32)
    with pytest.raises(ValueError, match='shape'):
        F.upsampling_2d(x, numpy.zeros((1, 1, 2, 3), numpy.int32), 2)
    with pytest.raises(TypeError, match='integers'):
        F.upsampling_2d(x, numpy.zeros((1, 1, 2, 2), numpy.float32), 2)
    with pytest.raises(ValueError, match='kh \\* kw'):
        F.upsampling_2d(x, numpy.full((1, 1, 2, 2), 4, numpy.int32), 2)
