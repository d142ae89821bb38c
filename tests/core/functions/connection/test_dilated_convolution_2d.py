import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def dilated_reference(x, W, b, stride, pad, dilate):
    """Plain numpy: a convolution with a kernel spread out by inserting zeros."""
    out_c, c, kh, kw = W.shape
    spread = numpy.zeros((out_c, c, (kh - 1) * dilate + 1, (kw - 1) * dilate + 1), W.dtype)
    spread[:, :, ::dilate, ::dilate] = W
    padded = numpy.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    big_h, big_w = spread.shape[2:]
    out_h = (padded.shape[2] - big_h) // stride + 1
    out_w = (padded.shape[3] - big_w) // stride + 1
    y = numpy.zeros((x.shape[0], out_c, out_h, out_w), x.dtype)
    for p in range(out_h):
        for q in range(out_w):
            window = padded[:, :, p * stride:p * stride + big_h, q * stride:q * stride + big_w]
            y[:, :, p, q] = numpy.einsum('nchw,ochw->no', window, spread)
    return y + b[None, :, None, None]


@pytest.mark.parametrize('stride,pad,dilate', [(1, 0, 2), (2, 2, 2), (1, 1, 3)],
                         ids=['dilate2', 'stride2_pad2', 'dilate3'])
def test_dilated_convolution_2d(stride, pad, dilate, rng):
    inputs = (rng.normal(size=(2, 3, 8, 7)), rng.normal(size=(4, 3, 3, 2)), rng.normal(size=4))
    check_function(
        lambda x, W, b: F.dilated_convolution_2d(x, W, b, stride, pad, dilate), inputs,
        lambda x, W, b: dilated_reference(x, W, b, stride, pad, dilate), double_backward=True)


def test_argument_order_and_cover_all(rng):
    x = rng.normal(size=(1, 2, 8, 8))
    W = rng.normal(size=(3, 2, 3, 3))
    y = F.dilated_convolution_2d(x, W, None, 3, 0, 2, True)
    expected = F.convolution_2d(x, W, None, 3, 0, True, dilate=2)
    numpy.testing.assert_array_equal(y.array, expected.array)
    assert y.shape == (1, 3, 2, 2)
