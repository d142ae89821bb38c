"""Array-level 2-D correlation, its adjoint and its weight gradient (private to connection/).

The three functions here are the whole numerical content of convolution_2d and
deconvolution_2d; the FunctionNodes only combine them:

- ``correlate(x, W)``: the convolution forward, (N, C, H, W) -> (N, O, out_h, out_w);
- ``correlate_transpose(gy, W)``: its adjoint in x (the deconvolution forward);
- ``correlate_grad_weight(x, gy)``: its adjoint in W.

W is (O, C / groups, kh, kw) throughout, and ``stride``, ``pad``, ``dilate``, ``ksize``,
``in_size`` and ``out_size`` are (vertical, horizontal) pairs. The general path cuts the
patches with im2col and does one batched matmul; a group with one input channel
(depthwise) loops over the kh * kw kernel offsets with vectorised multiply-adds instead,
since its matmuls would be tiny.
"""

from cvzoo.core import backend
from cvzoo.core.functions.connection import im2col as im2col_module


def _is_depthwise(W, groups):
    return groups > 1 and W.shape[1] == 1


def correlate(x, W, out_size, stride, pad, dilate, groups):
    """Convolution forward without bias: (N, C, H, W) -> (N, O, out_h, out_w)."""
    if _is_depthwise(W, groups):
        return _correlate_depthwise(x, W, out_size, stride, pad, dilate)
    xp = backend.get_array_module(x, W)
    n = x.shape[0]
    out_c, channels_per_group, kh, kw = W.shape
    patch_len = channels_per_group * kh * kw
    # NOTE: for a 1x1 kernel without padding the col view is x itself (strided when the
    # stride is > 1), and this reshape copies nothing for a contiguous stride-1 x.
    col = im2col_module.im2col(x, (kh, kw), out_size, stride, pad, dilate)
    col = col.reshape(n, groups, patch_len, out_size[0] * out_size[1])
    y = xp.matmul(W.reshape(groups, out_c // groups, patch_len), col)
    return y.reshape((n, out_c) + tuple(out_size))


def correlate_transpose(gy, W, in_size, stride, pad, dilate, groups):
    """The adjoint of ``correlate`` in x: (N, O, out_h, out_w) -> (N, C, H, W)."""
    if _is_depthwise(W, groups):
        return _correlate_transpose_depthwise(gy, W, in_size, stride, pad, dilate, groups)
    xp = backend.get_array_module(gy, W)
    n, out_c, out_h, out_w = gy.shape
    _, channels_per_group, kh, kw = W.shape
    weight = W.reshape(groups, out_c // groups, channels_per_group * kh * kw)
    col = xp.matmul(weight.transpose(0, 2, 1),
                    gy.reshape(n, groups, out_c // groups, out_h * out_w))
    col = col.reshape(n, groups * channels_per_group, kh, kw, out_h, out_w)
    pointwise = (kh, kw) == (1, 1) and tuple(stride) == (1, 1) and tuple(pad) == (0, 0)
    if pointwise and (out_h, out_w) == tuple(in_size):
        return col.reshape(n, -1, out_h, out_w)
    return im2col_module.col2im(col, in_size, stride, pad, dilate)


def correlate_grad_weight(x, gy, ksize, stride, pad, dilate, groups):
    """The adjoint of ``correlate`` in W: gW (O, C / groups, kh, kw) from x and gy."""
    n, channels = x.shape[:2]
    if groups > 1 and channels == groups:
        return _correlate_grad_weight_depthwise(x, gy, ksize, stride, pad, dilate)
    xp = backend.get_array_module(x, gy)
    out_c, out_h, out_w = gy.shape[1:]
    patch_len = channels // groups * ksize[0] * ksize[1]
    col = im2col_module.im2col(x, ksize, (out_h, out_w), stride, pad, dilate)
    col = col.reshape(n, groups, patch_len, out_h * out_w)
    gy = gy.reshape(n, groups, out_c // groups, out_h * out_w)
    if n == 1:
        gW = xp.matmul(gy[0], col[0].transpose(0, 2, 1))
    else:
        gW = xp.matmul(gy, col.transpose(0, 1, 3, 2)).sum(axis=0)
    return gW.reshape((out_c, channels // groups) + tuple(ksize))


def _correlate_depthwise(x, W, out_size, stride, pad, dilate):
    xp = backend.get_array_module(x, W)
    n, channels = x.shape[:2]
    out_c, _, kh, kw = W.shape
    weight = W.reshape(channels, out_c // channels, kh, kw)
    col = im2col_module.im2col(x, (kh, kw), out_size, stride, pad, dilate)
    y = xp.zeros((n,) + weight.shape[:2] + tuple(out_size), dtype=x.dtype)
    term = xp.empty_like(y)
    for i in range(kh):
        for j in range(kw):
            xp.multiply(col[:, :, None, i, j], weight[:, :, i, j, None, None], out=term)
            y += term
    return y.reshape((n, out_c) + tuple(out_size))


def _correlate_transpose_depthwise(gy, W, in_size, stride, pad, dilate, groups):
    xp = backend.get_array_module(gy, W)
    n, out_c, out_h, out_w = gy.shape
    kh, kw = W.shape[2:]
    weight = W.reshape(groups, out_c // groups, kh, kw)
    gy = gy.reshape(n, groups, out_c // groups, out_h, out_w)
    full = im2col_module.padded_shape(in_size, (kh, kw), (out_h, out_w), stride, pad, dilate)
    image = xp.zeros((n, groups) + full, dtype=gy.dtype)
    for i in range(kh):
        for j in range(kw):
            rows, cols = im2col_module.offset_slices(i, j, (out_h, out_w), stride, dilate)
            image[:, :, rows, cols] += xp.einsum('ncmhw,cm->nchw', gy, weight[:, :, i, j])
    return im2col_module.crop_image(image, in_size, pad)


def _correlate_grad_weight_depthwise(x, gy, ksize, stride, pad, dilate):
    xp = backend.get_array_module(x, gy)
    n, channels = x.shape[:2]
    out_c, out_h, out_w = gy.shape[1:]
    col = im2col_module.im2col(x, ksize, (out_h, out_w), stride, pad, dilate)
    gy = gy.reshape(n, channels, out_c // channels, out_h, out_w)
    gW = xp.empty((channels, out_c // channels) + tuple(ksize), dtype=gy.dtype)
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            gW[:, :, i, j] = xp.einsum('nchw,ncmhw->cm', col[:, :, i, j], gy)
    return gW.reshape((out_c, 1) + tuple(ksize))
