"""Array-level 2-D correlation, its adjoint and its weight gradient (private to connection/).

The three functions here are the whole numerical content of convolution_2d and
deconvolution_2d; the FunctionNodes only combine them:

- ``correlate(x, W)``: the convolution forward, (N, C, H, W) -> (N, O, out_h, out_w);
- ``correlate_transpose(gy, W)``: its adjoint in x (the deconvolution forward);
- ``correlate_grad_weight(x, gy)``: its adjoint in W.

W is (O, C / groups, kh, kw) throughout, and ``stride``, ``pad``, ``dilate``, ``ksize``,
``in_size`` and ``out_size`` are (vertical, horizontal) pairs. The general path cuts the
patches with im2col and multiplies them with one matmul per group (and per image for
large images, see _is_per_image); a group with one input channel
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
    per_image = _is_per_image(x.shape[0], out_size)
    col = _patch_matrix(x, W.shape[2:], out_size, stride, pad, dilate, groups, per_image)
    y = _matmul(W.reshape(groups, W.shape[0] // groups, col.shape[2]), col)
    return _to_image(y, x.shape[0], out_size)


def correlate_transpose(gy, W, in_size, stride, pad, dilate, groups):
    """The adjoint of ``correlate`` in x: (N, O, out_h, out_w) -> (N, C, H, W)."""
    if _is_depthwise(W, groups):
        return _correlate_transpose_depthwise(gy, W, in_size, stride, pad, dilate, groups)
    n, out_c, out_h, out_w = gy.shape
    _, channels_per_group, kh, kw = W.shape
    per_image = _is_per_image(n, (out_h, out_w))
    weight = W.reshape(groups, out_c // groups, channels_per_group * kh * kw)
    col = _matmul(weight.transpose(0, 2, 1), _to_matrix(gy, groups, per_image))
    pointwise = (kh, kw) == (1, 1) and tuple(stride) == (1, 1) and tuple(pad) == (0, 0)
    if pointwise and (out_h, out_w) == tuple(in_size):
        return _to_image(col, n, in_size)
    channels = groups * channels_per_group
    if per_image:
        col = col.reshape(n, channels, kh, kw, out_h, out_w)
    else:
        col = col.reshape(channels, kh, kw, n, out_h, out_w).transpose(3, 0, 1, 2, 4, 5)
    return im2col_module.col2im(col, in_size, stride, pad, dilate)


def correlate_grad_weight(x, gy, ksize, stride, pad, dilate, groups):
    """The adjoint of ``correlate`` in W: gW (O, C / groups, kh, kw) from x and gy."""
    channels = x.shape[1]
    if groups > 1 and channels == groups:
        return _correlate_grad_weight_depthwise(x, gy, ksize, stride, pad, dilate)
    per_image = _is_per_image(x.shape[0], gy.shape[2:])
    col = _patch_matrix(x, ksize, gy.shape[2:], stride, pad, dilate, groups, per_image)
    gW = _matmul(_to_matrix(gy, groups, per_image), col.transpose(0, 1, 3, 2)).sum(axis=0)
    return gW.reshape((gy.shape[1], channels // groups) + tuple(ksize))


# Output images of at least this many pixels are multiplied image by image.
_PER_IMAGE_MIN_PIXELS = 512


def _is_per_image(n, out_size):
    """Choose the layout of the matrices: image-major (per image) or channel-major.

    NOTE: both layouts give one matmul per group and block; they differ in copies. The
    image-major layout (N, groups, K, H * W) needs no transposition of x, y or gy (for a
    1x1 convolution none at all), and wins when an image has many pixels. The
    channel-major layout (1, groups, K, N * H * W) transposes them but makes one large
    matmul over the batch, which wins for the small images of deep layers, where
    per-image matmuls of a few dozen columns run far below the BLAS peak.
    """
    return n > 1 and out_size[0] * out_size[1] >= _PER_IMAGE_MIN_PIXELS


def _patch_matrix(x, ksize, out_size, stride, pad, dilate, groups, per_image):
    """The patches of x as a C-contiguous (B, groups, C / groups * kh * kw, L) matrix.

    (B, L) is (N, out_h * out_w) per image and (1, N * out_h * out_w) otherwise. For a 1x1
    kernel without padding the col view is x itself, so the per-image matrix is a view.
    """
    xp = backend.get_array_module(x)
    n, channels = x.shape[:2]
    col = im2col_module.im2col(x, ksize, out_size, stride, pad, dilate)
    patch_len = channels // groups * ksize[0] * ksize[1]
    pixels = out_size[0] * out_size[1]
    if per_image:
        return xp.ascontiguousarray(col).reshape(n, groups, patch_len, pixels)
    col = xp.ascontiguousarray(col.transpose(1, 2, 3, 0, 4, 5))
    return col.reshape(1, groups, patch_len, n * pixels)


def _to_matrix(y, groups, per_image):
    """(N, C, H, W) -> C-contiguous (B, groups, C / groups, L), (B, L) as in _patch_matrix."""
    xp = backend.get_array_module(y)
    n, channels, h, w = y.shape
    if per_image:
        return xp.ascontiguousarray(y).reshape(n, groups, channels // groups, h * w)
    y = xp.ascontiguousarray(y.transpose(1, 0, 2, 3))
    return y.reshape(1, groups, channels // groups, n * h * w)


def _to_image(y, n, size):
    """(B, groups, C / groups, L) -> C-contiguous (N, C, H, W), the inverse of _to_matrix."""
    xp = backend.get_array_module(y)
    channels = y.shape[1] * y.shape[2]
    if y.shape[0] == n:
        return y.reshape((n, channels) + tuple(size))
    y = y.reshape((channels, n) + tuple(size))
    return xp.ascontiguousarray(y.transpose(1, 0, 2, 3))


def _matmul(a, b):
    """Broadcast matmul of (groups, M, K) or (B, groups, M, K) by (B, groups, K, L)."""
    xp = backend.get_array_module(a, b)
    if b.shape[:2] == (1, 1) and a.shape[-3] == 1:
        return xp.matmul(a.reshape(a.shape[-2:]), b[0, 0])[None, None]
    return xp.matmul(a, b)


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
