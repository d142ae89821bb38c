import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import cudnn
from cvzoo.core.functions.connection import correlation
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def _pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def _outsize(size, k, s, p, d, cover_all):
    span = size + 2 * p - ((k - 1) * d + 1)
    return (-(-span // s) if cover_all else span // s) + 1


def conv_reference(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """Plain-numpy convolution: an einsum per (group, kernel offset) on a padded copy."""
    (sy, sx), (ph, pw), (dy, dx) = _pair(stride), _pair(pad), _pair(dilate)
    n, c, h, w = x.shape
    out_c, c_group, kh, kw = W.shape
    out_h = _outsize(h, kh, sy, ph, dy, cover_all)
    out_w = _outsize(w, kw, sx, pw, dx, cover_all)
    padded = numpy.zeros((n, c, h + 2 * ph + sy + kh * dy, w + 2 * pw + sx + kw * dx), x.dtype)
    padded[:, :, ph:ph + h, pw:pw + w] = x
    y = numpy.zeros((n, out_c, out_h, out_w), x.dtype)
    o_group = out_c // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = padded[:, g * c_group:(g + 1) * c_group,
                               i * dy:i * dy + sy * (out_h - 1) + 1:sy,
                               j * dx:j * dx + sx * (out_w - 1) + 1:sx]
                weight = W[g * o_group:(g + 1) * o_group, :, i, j]
                y[:, g * o_group:(g + 1) * o_group] += numpy.einsum('ncpq,oc->nopq', patch, weight)
    if b is not None:
        y += b[None, :, None, None]
    return y


# id: (x shape, W shape, keyword arguments, with bias, double backward)
CASES = {
    'basic': ((2, 3, 5, 6), (4, 3, 3, 3), {}, True, True),
    'no_bias': ((2, 3, 5, 6), (4, 3, 3, 3), {}, False, False),
    'stride2_pad1': ((2, 3, 6, 7), (4, 3, 3, 3), dict(stride=2, pad=1), True, True),
    'pad2': ((1, 2, 4, 5), (3, 2, 3, 3), dict(pad=2), True, False),
    'dilate2': ((2, 2, 7, 6), (3, 2, 3, 3), dict(dilate=2, pad=1), True, True),
    'pairs_rect_kernel': ((2, 3, 7, 6), (4, 3, 3, 2),
                          dict(stride=(2, 1), pad=(1, 0), dilate=(1, 2)), True, False),
    'cover_all': ((2, 3, 6, 7), (4, 3, 3, 3), dict(stride=2, cover_all=True), True, True),
    'cover_all_dilate_pad': ((1, 2, 8, 7), (3, 2, 3, 2),
                             dict(stride=3, pad=1, dilate=2, cover_all=True), True, False),
    'groups2': ((2, 4, 5, 5), (6, 2, 3, 3), dict(groups=2, pad=1), True, True),
    'groups2_stride2': ((2, 4, 6, 5), (4, 2, 3, 3), dict(groups=2, stride=2), True, False),
    'depthwise': ((2, 3, 5, 5), (3, 1, 3, 3), dict(groups=3, pad=1), True, True),
    'depthwise_multiplier_stride2': ((2, 3, 6, 6), (6, 1, 3, 3),
                                     dict(groups=3, stride=2, pad=1, dilate=(1, 2)), True, True),
    'depthwise_dilate2_pad2': ((2, 3, 6, 5), (6, 1, 3, 2),
                               dict(groups=3, pad=(2, 1), dilate=2), False, False),
    'depthwise_no_pad': ((1, 2, 5, 6), (2, 1, 2, 3), dict(groups=2), True, False),
    'pointwise': ((2, 3, 4, 5), (5, 3, 1, 1), {}, True, True),
    'pointwise_stride2': ((2, 3, 5, 5), (5, 3, 1, 1), dict(stride=2), True, False),
    'pointwise_stride2_cover_all': ((2, 3, 4, 4), (5, 3, 1, 1),
                                    dict(stride=3, cover_all=True), False, False),
    'empty_batch': ((0, 3, 5, 5), (4, 3, 3, 3), dict(stride=2, pad=1), True, False),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_convolution_2d(case, rng):
    x_shape, w_shape, kwargs, with_bias, double_backward = case
    inputs = [rng.normal(size=x_shape), rng.normal(size=w_shape)]
    if with_bias:
        inputs.append(rng.normal(size=w_shape[0]))
    check_function(lambda *args: F.convolution_2d(*args, **kwargs), tuple(inputs),
                   lambda *args: conv_reference(*args, **kwargs),
                   double_backward=double_backward)


@pytest.mark.parametrize('w_shape,kwargs', [
    ((4, 3, 3, 3), dict(stride=2, pad=1)),
    ((4, 3, 1, 1), {}),
    ((3, 1, 3, 3), dict(groups=3, pad=1)),
], ids=['3x3', 'pointwise', 'depthwise'])
def test_non_contiguous_input(w_shape, kwargs, rng):
    x_nhwc = rng.normal(size=(2, 5, 4, 3))

    def func(x, W):
        x = F.transpose(x, (0, 3, 1, 2))
        assert not x.array.flags.c_contiguous
        return F.convolution_2d(x, W, **kwargs)

    check_function(func, (x_nhwc, rng.normal(size=w_shape)),
                   lambda x, W: conv_reference(x.transpose(0, 3, 1, 2), W, **kwargs),
                   double_backward=True)


@pytest.mark.parametrize('groups', [1, 2], ids=['groups1', 'groups2'])
def test_weight_gradient_summed_over_slices(groups, monkeypatch, rng):
    # A reduction of 2 * 6 * 7 = 84 pixels in slices of 8 (the last one shorter).
    monkeypatch.setattr(correlation, '_REDUCTION_CHUNK', 8)
    inputs = (rng.normal(size=(2, 4, 6, 7)), rng.normal(size=(4, 4 // groups, 3, 3)))
    check_function(lambda x, W: F.convolution_2d(x, W, pad=1, groups=groups), inputs,
                   lambda x, W: conv_reference(x, W, pad=1, groups=groups),
                   double_backward=True)


def test_element_wise_gradient_on_a_tiny_case(rng):
    # Small enough (< 256 elements) for the harness to compare every gradient entry.
    inputs = (rng.normal(size=(1, 2, 4, 4)), rng.normal(size=(2, 2, 2, 2)), rng.normal(size=2))
    check_function(lambda x, W, b: F.convolution_2d(x, W, b, stride=2, pad=1), inputs,
                   lambda x, W, b: conv_reference(x, W, b, stride=2, pad=1))


def test_float32_stays_float32(rng):
    x = F.convolution_2d(rng.normal(size=(1, 2, 5, 5)).astype(numpy.float32),
                         rng.normal(size=(3, 2, 3, 3)).astype(numpy.float32))
    assert x.dtype == numpy.float32


def test_output_size_rule():
    x = numpy.zeros((1, 1, 10, 9), numpy.float32)
    W = numpy.zeros((1, 1, 3, 3), numpy.float32)
    assert F.convolution_2d(x, W, stride=4).shape == (1, 1, 2, 2)
    assert F.convolution_2d(x, W, stride=4, cover_all=True).shape == (1, 1, 3, 3)
    assert F.convolution_2d(x, W, pad=(1, 2), dilate=(3, 1)).shape == (1, 1, 6, 11)


@pytest.mark.parametrize('x_shape,w_shape,kwargs,error,words', [
    ((1, 3, 5, 5), (4, 2, 3, 3), {}, ValueError, ['in_channels', 'W.shape=(4, 2, 3, 3)']),
    ((1, 4, 5, 5), (3, 2, 3, 3), dict(groups=2), ValueError, ['groups=2', 'W.shape']),
    ((1, 3, 5), (4, 3, 3, 3), {}, ValueError, ['x must have 4 axes']),
    ((1, 3, 2, 2), (4, 3, 3, 3), {}, ValueError, ['output size']),
    ((1, 3, 5, 5), (4, 3, 3, 3), dict(stride=0), ValueError, ['stride', '>= 1']),
    ((1, 3, 5, 5), (4, 3, 3, 3), dict(pad=-1), ValueError, ['pad', '>= 0']),
    ((1, 3, 5, 5), (4, 3, 3, 3), dict(stride=1.5), TypeError, ['stride', 'int']),
    ((1, 3, 5, 5), (4, 3, 3, 3), dict(dilate=(1, 2, 3)), TypeError, ['dilate']),
], ids=['channels', 'groups', 'rank', 'too_small', 'stride0', 'negative_pad', 'float_stride',
        'dilate_triple'])
def test_bad_arguments(x_shape, w_shape, kwargs, error, words):
    x = numpy.zeros(x_shape, numpy.float32)
    W = numpy.zeros(w_shape, numpy.float32)
    with pytest.raises(error) as info:
        F.convolution_2d(x, W, **kwargs)
    for word in words:
        assert word in str(info.value)


def test_bad_bias_and_dtype():
    x = numpy.zeros((1, 3, 5, 5), numpy.float32)
    W = numpy.zeros((4, 3, 3, 3), numpy.float32)
    with pytest.raises(ValueError, match=r'b must have shape \(4,\)'):
        F.convolution_2d(x, W, numpy.zeros(3, numpy.float32))
    with pytest.raises(TypeError, match='W.dtype must equal x.dtype'):
        F.convolution_2d(x, W.astype(numpy.float64))
    with pytest.raises(TypeError, match='float'):
        F.convolution_2d(x.astype(numpy.int32), W)


def test_backward_keeps_no_patch_buffer(rng):
    x = Variable(rng.normal(size=(2, 3, 6, 6)))
    y = F.convolution_2d(x, rng.normal(size=(4, 3, 3, 3)), pad=1)
    node = y.creator
    arrays = [v for v in vars(node).values() if isinstance(v, numpy.ndarray)]
    assert arrays == []
    assert sorted(node._retained_inputs) == [0, 1]


@pytest.mark.reference
@pytest.mark.parametrize('kwargs', [
    dict(stride=2, pad=3), dict(pad=1, dilate=2), dict(groups=2, stride=2, pad=1),
    dict(groups=4, pad=1),
], ids=['7x7_stride2', 'dilate2', 'groups2', 'depthwise'])
def test_against_torch(kwargs, rng):
    torch = pytest.importorskip('torch')
    kh = 7 if kwargs.get('pad') == 3 else 3
    x = rng.normal(size=(2, 4, 15, 13)).astype(numpy.float32)
    W = rng.normal(size=(8, 4 // kwargs.get('groups', 1), kh, kh)).astype(numpy.float32)
    b = rng.normal(size=8).astype(numpy.float32)
    xv, Wv, bv = Variable(x), Variable(W), Variable(b)
    y = F.convolution_2d(xv, Wv, bv, **kwargs)
    gy = rng.normal(size=y.shape).astype(numpy.float32)
    y.grad = gy
    y.backward()
    tx, tW, tb = (torch.tensor(a, requires_grad=True) for a in (x, W, b))
    ty = torch.nn.functional.conv2d(tx, tW, tb, stride=kwargs.get('stride', 1),
                                    padding=kwargs.get('pad', 0),
                                    dilation=kwargs.get('dilate', 1),
                                    groups=kwargs.get('groups', 1))
    ty.backward(torch.tensor(gy))
    pairs = ((y.array, ty), (xv.grad, tx.grad), (Wv.grad, tW.grad), (bv.grad, tb.grad))
    for ours, theirs in pairs:
        numpy.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-4, atol=1e-3)


def _is_channel_major(array):
    return array.transpose(1, 0, 2, 3).flags.c_contiguous and not array.flags.c_contiguous


# The second convolution of a chain reads the first one's channel-major output.
CHAINED = {
    '3x3_pad1': ((5, 4, 3, 3), dict(pad=1)),
    '3x3_stride2_pad1': ((5, 4, 3, 3), dict(stride=2, pad=1)),
    'pointwise': ((5, 4, 1, 1), {}),
    'pointwise_stride2': ((5, 4, 1, 1), dict(stride=2)),
    'groups2': ((6, 2, 3, 3), dict(groups=2, pad=1)),
    'depthwise': ((4, 1, 3, 3), dict(groups=4, pad=1)),
    'depthwise_stride2': ((8, 1, 3, 3), dict(groups=4, stride=2, pad=1)),
    'cover_all': ((5, 4, 3, 2), dict(stride=2, cover_all=True)),
}


@pytest.mark.parametrize('w_shape,kwargs', CHAINED.values(), ids=list(CHAINED))
def test_chained_convolutions_on_channel_major_memory(w_shape, kwargs, rng):
    inputs = (rng.normal(size=(3, 2, 6, 5)), rng.normal(size=(4, 2, 1, 1)),
              rng.normal(size=w_shape))

    def func(x, W1, W2):
        h = F.convolution_2d(x, W1)
        # the im2col path's layout; cuDNN (pytest --fake-cudnn) writes C order
        assert _is_channel_major(h.array) or cudnn.should_use('convolution_2d', h.array)
        return F.convolution_2d(h, W2, **kwargs)

    check_function(func, inputs, lambda x, W1, W2: conv_reference(
        conv_reference(x, W1), W2, **kwargs), double_backward=True)


def test_gradient_of_a_padded_convolution_keeps_the_layout(rng):
    # gx comes from col2im and a crop; both keep the channel-major layout of the GEMM.
    x = Variable(rng.normal(size=(3, 2, 5, 5)).astype(numpy.float32))
    y = F.convolution_2d(x, rng.normal(size=(4, 2, 3, 3)).astype(numpy.float32), pad=1)
    y.grad = numpy.ones_like(y.array)
    y.backward()
    assert _is_channel_major(y.array) and _is_channel_major(x.grad)
