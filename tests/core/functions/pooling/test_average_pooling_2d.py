import numpy
import pytest

import cvzoo.core as C
import cvzoo.core.functions as F
from cvzoo.core import backprop
from cvzoo.testing import check_function


def _reference(x, ksize, stride, pad, pad_value):
    """Average pooling one window at a time (windows never hang over the edge)."""
    (kh, kw), (sy, sx), (py, px) = ksize, stride, pad
    n, c, h, w = x.shape
    oh, ow = (h + 2 * py - kh) // sy + 1, (w + 2 * px - kw) // sx + 1
    y = numpy.zeros((n, c, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            rows = [r for r in range(i * sy - py, i * sy - py + kh) if 0 <= r < h]
            cols = [q for q in range(j * sx - px, j * sx - px + kw) if 0 <= q < w]
            total = x[:, :, rows][:, :, :, cols].sum(axis=(2, 3))
            count = kh * kw if pad_value == 0 else len(rows) * len(cols)
            y[:, :, i, j] = total / count
    return y


CASES = {
    'k2': ((2, 3, 4, 4), (2, 2), (2, 2), (0, 0)),
    'k3s2p1': ((2, 2, 7, 7), (3, 3), (2, 2), (1, 1)),
    'k3s1p1_overlap': ((1, 2, 5, 5), (3, 3), (1, 1), (1, 1)),
    'odd_rect': ((1, 2, 5, 7), (2, 3), (1, 2), (1, 0)),
    'global': ((2, 3, 3, 5), (3, 5), (3, 5), (0, 0)),
    'empty_batch': ((0, 2, 4, 4), (2, 2), (2, 2), (0, 0)),
}


@pytest.mark.parametrize('pad_value', [0, None], ids=['pad_value_0', 'pad_value_none'])
@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_average_pooling_2d(case, pad_value, rng):
    shape, ksize, stride, pad = case
    x = rng.standard_normal(shape)
    check_function(
        lambda x: F.average_pooling_2d(x, ksize, stride, pad, pad_value),
        (x,), lambda x: _reference(x, ksize, stride, pad, pad_value), double_backward=True)


def test_stride_defaults_to_ksize_and_hand_computed_padding():
    x = numpy.ones((1, 1, 2, 2), dtype=numpy.float32)
    y = F.average_pooling_2d(x, 2, 1, 1)
    numpy.testing.assert_allclose(y.array[0, 0], [[.25, .5, .25], [.5, 1, .5], [.25, .5, .25]])
    y = F.average_pooling_2d(x, 2, 1, 1, pad_value=None)
    numpy.testing.assert_allclose(y.array[0, 0], numpy.ones((3, 3)))
    assert F.average_pooling_2d(numpy.ones((1, 1, 6, 6), numpy.float32), 3).shape == (
        1, 1, 2, 2)


def test_non_contiguous_input(rng):
    x = rng.standard_normal((2, 6, 7, 3)).astype(numpy.float32).transpose(0, 3, 1, 2)
    y = F.average_pooling_2d(x, 3, 2, 1)
    numpy.testing.assert_allclose(y.array, _reference(x, (3, 3), (2, 2), (1, 1), 0),
                                  rtol=1e-6, atol=1e-6)


def test_invalid_arguments():
    x = numpy.zeros((1, 1, 4, 4), dtype=numpy.float32)
    with pytest.raises(ValueError, match='pad_value'):
        F.average_pooling_2d(x, 2, pad_value=1)
    with pytest.raises(ValueError, match='ksize'):
        F.average_pooling_2d(x, 5)
    with pytest.raises(ValueError, match='x must be'):
        F.average_pooling_2d(x[0], 2)


@pytest.mark.reference
@pytest.mark.parametrize('pad_value', [0, None], ids=['pad_value_0', 'pad_value_none'])
@pytest.mark.parametrize('case', [c for c in CASES.values() if c[0][0]],
                         ids=[k for k, c in CASES.items() if c[0][0]])
def test_against_torch(case, pad_value, rng):
    torch = pytest.importorskip('torch')
    shape, ksize, stride, pad = case
    x = C.Variable(rng.standard_normal(shape).astype(numpy.float32))
    y = F.average_pooling_2d(x, ksize, stride, pad, pad_value)
    gy = rng.standard_normal(y.shape).astype(numpy.float32)
    gx, = backprop.grad([y], [x], [C.Variable(gy)])
    tx = torch.tensor(x.array, requires_grad=True)
    ty = torch.nn.functional.avg_pool2d(tx, ksize, stride, pad,
                                        count_include_pad=pad_value == 0)
    ty.backward(torch.from_numpy(gy))
    numpy.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(gx.array, tx.grad.numpy(), rtol=1e-5, atol=1e-6)
