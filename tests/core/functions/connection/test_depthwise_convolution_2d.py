import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def depthwise_reference(x, W, b, stride, pad):
    """Plain numpy, channel by channel: output channel c * multiplier + m is W[m, c] on x[c]."""
    multiplier, channels, kh, kw = W.shape
    padded = numpy.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out_h = (padded.shape[2] - kh) // stride + 1
    out_w = (padded.shape[3] - kw) // stride + 1
    y = numpy.zeros((x.shape[0], channels * multiplier, out_h, out_w), x.dtype)
    for c in range(channels):
        for m in range(multiplier):
            for p in range(out_h):
                for q in range(out_w):
                    window = padded[:, c, p * stride:p * stride + kh, q * stride:q * stride + kw]
                    y[:, c * multiplier + m, p, q] = (window * W[m, c]).sum(axis=(1, 2))
    if b is not None:
        y += b[None, :, None, None]
    return y


@pytest.mark.parametrize('multiplier,stride,pad,with_bias', [
    (1, 1, 1, True), (2, 2, 0, True), (3, 1, 2, False),
], ids=['multiplier1', 'multiplier2_stride2', 'multiplier3_pad2_no_bias'])
def test_depthwise_convolution_2d(multiplier, stride, pad, with_bias, rng):
    inputs = [rng.normal(size=(2, 3, 5, 6)), rng.normal(size=(multiplier, 3, 3, 3))]
    if with_bias:
        inputs.append(rng.normal(size=3 * multiplier))
    check_function(
        lambda x, W, b=None: F.depthwise_convolution_2d(x, W, b, stride, pad), tuple(inputs),
        lambda x, W, b=None: depthwise_reference(x, W, b, stride, pad), double_backward=True)


def test_channel_mismatch_names_in_channels():
    with pytest.raises(ValueError, match=r'in_channels.*W.shape=\(2, 4, 3, 3\)'):
        F.depthwise_convolution_2d(numpy.zeros((1, 3, 5, 5), numpy.float32),
                                   numpy.zeros((2, 4, 3, 3), numpy.float32))
