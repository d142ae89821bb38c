import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def _pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def deconv_reference(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """Plain-numpy transposed convolution: scatter x * W onto a padded output, then crop."""
    (sy, sx), (ph, pw), (dy, dx) = _pair(stride), _pair(pad), _pair(dilate)
    n, in_c, h, w = x.shape
    _, o_group, kh, kw = W.shape
    c_group = in_c // groups
    if outsize is None:
        outsize = (sy * (h - 1) + (kh - 1) * dy + 1 - 2 * ph,
                   sx * (w - 1) + (kw - 1) * dx + 1 - 2 * pw)
    out_h, out_w = outsize
    full = numpy.zeros((n, o_group * groups, out_h + 2 * ph + sy + kh * dy,
                        out_w + 2 * pw + sx + kw * dx), x.dtype)
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                contribution = numpy.einsum(
                    'ncpq,co->nopq', x[:, g * c_group:(g + 1) * c_group],
                    W[g * c_group:(g + 1) * c_group, :, i, j])
                full[:, g * o_group:(g + 1) * o_group,
                     i * dy:i * dy + sy * (h - 1) + 1:sy,
                     j * dx:j * dx + sx * (w - 1) + 1:sx] += contribution
    y = full[:, :, ph:ph + out_h, pw:pw + out_w]
    if b is not None:
        y = y + b[None, :, None, None]
    return y


# id: (x shape, W shape, keyword arguments, with bias, double backward)
CASES = {
    'basic': ((2, 3, 4, 5), (3, 4, 3, 3), {}, True, True),
    'no_bias': ((2, 3, 4, 5), (3, 4, 3, 3), {}, False, False),
    'stride2_pad1': ((2, 3, 3, 4), (3, 2, 3, 3), dict(stride=2, pad=1), True, True),
    'outsize_plus_one': ((2, 3, 3, 4), (3, 2, 3, 3),
                         dict(stride=2, pad=1, outsize=(6, 8)), True, True),
    'pad2': ((1, 2, 4, 4), (2, 3, 3, 3), dict(pad=2), True, False),
    'dilate2': ((2, 2, 3, 4), (2, 3, 3, 3), dict(dilate=2, pad=1), True, True),
    'pairs_rect_kernel': ((2, 3, 3, 4), (3, 2, 3, 2),
                          dict(stride=(2, 1), pad=(1, 0), dilate=(1, 2)), True, False),
    'groups2': ((2, 4, 4, 4), (4, 3, 3, 3), dict(groups=2, pad=1), True, True),
    'depthwise': ((2, 3, 4, 4), (3, 1, 3, 3), dict(groups=3, stride=2), True, True),
    'depthwise_from_multiplier': ((2, 6, 3, 3), (6, 1, 3, 3), dict(groups=3, pad=1), True,
                                  False),
    'pointwise': ((2, 3, 4, 5), (3, 5, 1, 1), {}, True, True),
    'pointwise_stride2': ((2, 3, 3, 3), (3, 5, 1, 1), dict(stride=2), True, False),
    'empty_batch': ((0, 3, 3, 3), (3, 2, 3, 3), dict(stride=2), True, False),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_deconvolution_2d(case, rng):
    x_shape, w_shape, kwargs, with_bias, double_backward = case
    groups = kwargs.get('groups', 1)
    inputs = [rng.normal(size=x_shape), rng.normal(size=w_shape)]
    if with_bias:
        inputs.append(rng.normal(size=w_shape[1] * groups))
    check_function(lambda *args: F.deconvolution_2d(*args, **kwargs), tuple(inputs),
                   lambda *args: deconv_reference(*args, **kwargs),
                   double_backward=double_backward)


def test_non_contiguous_input(rng):
    def func(x, W):
        x = F.transpose(x, (0, 3, 1, 2))
        assert not x.array.flags.c_contiguous
        return F.deconvolution_2d(x, W, stride=2, pad=1)

    check_function(func, (rng.normal(size=(2, 3, 4, 3)), rng.normal(size=(3, 2, 3, 3))),
                   lambda x, W: deconv_reference(x.transpose(0, 3, 1, 2), W, stride=2, pad=1),
                   double_backward=True)


ADJOINT_CASES = {
    'plain': ((2, 3, 7, 6), (4, 3, 3, 3), dict()),
    'stride2_pad1': ((2, 3, 7, 6), (4, 3, 3, 3), dict(stride=2, pad=1)),
    'cover_all': ((2, 3, 6, 7), (4, 3, 3, 3), dict(stride=2, cover_all=True)),
    'dilate': ((1, 2, 9, 8), (3, 2, 3, 2), dict(dilate=(2, 3), pad=(1, 2))),
    'groups': ((2, 4, 6, 6), (6, 2, 3, 3), dict(groups=2, stride=(1, 2))),
    'depthwise': ((2, 4, 6, 6), (8, 1, 3, 3), dict(groups=4, stride=2, pad=1)),
    'pointwise': ((2, 4, 5, 5), (3, 4, 1, 1), dict()),
}


@pytest.mark.parametrize('case', ADJOINT_CASES.values(), ids=list(ADJOINT_CASES))
def test_is_the_adjoint_of_convolution(case, rng):
    # <conv(x, W), y> == <x, deconv(y, W)>, with outsize naming the convolution's input size.
    x_shape, w_shape, kwargs = case
    x = rng.normal(size=x_shape)
    W = rng.normal(size=w_shape)
    y = F.convolution_2d(x, W, **kwargs)
    z = rng.normal(size=y.shape)
    deconv_kwargs = {k: v for k, v in kwargs.items() if k != 'cover_all'}
    back = F.deconvolution_2d(z, W, outsize=x_shape[2:], **deconv_kwargs)
    assert back.shape == x.shape
    numpy.testing.assert_allclose((y.array * z).sum(), (x * back.array).sum(), rtol=1e-10)


def test_float32_stays_float32(rng):
    y = F.deconvolution_2d(rng.normal(size=(1, 2, 3, 3)).astype(numpy.float32),
                           rng.normal(size=(2, 3, 3, 3)).astype(numpy.float32), stride=2)
    assert y.dtype == numpy.float32 and y.shape == (1, 3, 7, 7)


@pytest.mark.parametrize('x_shape,w_shape,kwargs,words', [
    ((1, 3, 4, 4), (2, 3, 3, 3), {}, ['in_channels', 'W.shape=(2, 3, 3, 3)']),
    ((1, 3, 4, 4), (3, 3, 3, 3), dict(groups=2), ['groups=2']),
    ((1, 3, 4, 4), (3, 3, 3, 3), dict(stride=2, outsize=(11, 9)), ['outsize=(11, 9)']),
    ((1, 3, 4, 4), (3, 3, 3, 3), dict(stride=2, outsize=(9, 7)), ['outsize=(9, 7)']),
    ((1, 3, 1, 1), (3, 3, 1, 1), dict(pad=1), ['output size']),
], ids=['channels', 'groups', 'outsize_too_large', 'outsize_too_small', 'empty_output'])
def test_bad_arguments(x_shape, w_shape, kwargs, words):
    x = numpy.zeros(x_shape, numpy.float32)
    W = numpy.zeros(w_shape, numpy.float32)
    with pytest.raises(ValueError) as info:
        F.deconvolution_2d(x, W, **kwargs)
    for word in words:
        assert word in str(info.value)


def test_outsize_range_is_accepted():
    # stride 3: lengths 7, 8 and 9 all convolve back to 3 (9 with cover_all at 3 too).
    x = numpy.zeros((1, 1, 3, 3), numpy.float32)
    W = numpy.zeros((1, 1, 3, 3), numpy.float32)
    for out in (7, 8, 9):
        assert F.deconvolution_2d(x, W, stride=3, outsize=(out, out)).shape == (1, 1, out, out)


@pytest.mark.reference
@pytest.mark.parametrize('kwargs', [
    dict(stride=2, pad=1), dict(stride=2, pad=1, output_padding=1), dict(dilate=2),
    dict(groups=2, stride=2), dict(groups=4, pad=1),
], ids=['stride2', 'outsize', 'dilate2', 'groups2', 'depthwise'])
def test_against_torch(kwargs, rng):
    torch = pytest.importorskip('torch')
    kwargs = dict(kwargs)
    extra = kwargs.pop('output_padding', 0)
    groups = kwargs.get('groups', 1)
    x = rng.normal(size=(2, 4, 6, 5)).astype(numpy.float32)
    W = rng.normal(size=(4, 8 // groups, 3, 3)).astype(numpy.float32)
    b = rng.normal(size=8).astype(numpy.float32)
    tx, tW, tb = (torch.tensor(a, requires_grad=True) for a in (x, W, b))
    ty = torch.nn.functional.conv_transpose2d(
        tx, tW, tb, stride=kwargs.get('stride', 1), padding=kwargs.get('pad', 0),
        output_padding=extra, groups=groups, dilation=kwargs.get('dilate', 1))
    if extra:
        kwargs['outsize'] = tuple(ty.shape[2:])
    xv, Wv, bv = Variable(x), Variable(W), Variable(b)
    y = F.deconvolution_2d(xv, Wv, bv, **kwargs)
    gy = rng.normal(size=y.shape).astype(numpy.float32)
    y.grad = gy
    y.backward()
    ty.backward(torch.tensor(gy))
    pairs = ((y.array, ty), (xv.grad, tx.grad), (Wv.grad, tW.grad), (bv.grad, tb.grad))
    for ours, theirs in pairs:
        numpy.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-4, atol=1e-3)
