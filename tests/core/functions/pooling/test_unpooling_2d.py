import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _insize(size, k, s, p, cover_all):
    if cover_all:
        return s * (size - 1) + k - s + 1 - 2 * p
    return s * (size - 1) + k - 2 * p


def _reference(x, ksize, stride, pad, outsize):
    """Copy each value into every cell of its window, one window at a time."""
    (kh, kw), (sy, sx), (py, px) = ksize, stride, pad
    n, c, h, w = x.shape
    y = numpy.zeros((n, c) + tuple(outsize), dtype=x.dtype)
    for i in range(h):
        for j in range(w):
            for r in range(i * sy - py, i * sy - py + kh):
                for q in range(j * sx - px, j * sx - px + kw):
                    if 0 <= r < outsize[0] and 0 <= q < outsize[1]:
                        y[:, :, r, q] += x[:, :, i, j]
    return y


CASES = {
    'k2_nearest': ((2, 3, 2, 3), (2, 2), (2, 2), (0, 0), False, None),
    'k2_cover_all': ((1, 2, 3, 3), (2, 2), (2, 2), (0, 0), True, None),
    'k3s2p1_overlap': ((2, 2, 3, 3), (3, 3), (2, 2), (1, 1), True, None),
    'k3s2p1_outsize': ((1, 2, 3, 3), (3, 3), (2, 2), (1, 1), True, (4, 5)),
    'odd_rect': ((1, 2, 3, 4), (2, 3), (1, 2), (1, 0), False, None),
    'empty_batch': ((0, 2, 2, 2), (2, 2), (2, 2), (0, 0), True, None),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_unpooling_2d(case, rng):
    shape, ksize, stride, pad, cover_all, outsize = case
    want_size = outsize or tuple(
        _insize(n, k, s, p, cover_all) for n, k, s, p in zip(shape[2:], ksize, stride, pad))
    x = rng.standard_normal(shape)
    check_function(
        lambda x: F.unpooling_2d(x, ksize, stride, pad, outsize, cover_all),
        (x,), lambda x: _reference(x, ksize, stride, pad, want_size), double_backward=True)


def test_is_nearest_upsampling_with_stride_equal_ksize():
    x = numpy.arange(6, dtype=numpy.float32).reshape(1, 1, 2, 3)
    y = F.unpooling_2d(x, 2, cover_all=False)
    numpy.testing.assert_array_equal(y.array[0, 0], x[0, 0].repeat(2, 0).repeat(2, 1))


def test_rejects_inconsistent_outsize():
    x = numpy.zeros((1, 1, 3, 3), dtype=numpy.float32)
    with pytest.raises(ValueError, match='unpooling_2d'):
        F.unpooling_2d(x, 2, outsize=(9, 6), cover_all=False)
    with pytest.raises(TypeError, match='outsize'):
        F.unpooling_2d(x, 2, outsize='6')
