"""Array-level 2-D correlation, its adjoint and its weight gradient (private to connection/).

The three functions here are the whole numerical content of convolution_2d and
deconvolution_2d; the FunctionNodes only combine them:

- ``correlate(x, W)``: the convolution forward, (N, C, H, W) -> (N, O, out_h, out_w);
- ``correlate_transpose(gy, W)``: its adjoint in x (the deconvolution forward);
- ``correlate_grad_weight(x, gy)``: its adjoint in W.

W is (O, C / groups, kh, kw) throughout, and ``stride``, ``pad``, ``dilate``, ``ksize``,
``in_size`` and ``out_size`` are (vertical, horizontal) pairs. The general path cuts the
patches with im2col and does one matmul per group over the whole batch; a group with
one input channel (depthwise) loops over the kh * kw kernel offsets with vectorised
multiply-adds instead, since its matmuls would be tiny.

Memory layout: the matmul gives the output channel-major, (O, N * out_h * out_w), and it
is returned as an (N, O, out_h, out_w) view of that memory instead of being copied to
C order (see im2col.is_channel_major). The next layer's elementwise ops keep that
layout, and the next convolution's patch matrix (channel-major again) is then a plain
copy, or no copy at all for a 1x1 kernel: two transposing copies per convolution are
gone (measured 6% of a ResNet-50 forward at batch 8). Any layout is accepted as input.
"""

import functools

import numpy

from cvzoo.core import backend, gemm, parallel, workspace
from cvzoo.core.functions.connection import im2col as im2col_module

# Slice length of the reduction axis in _group_matmul_long_reduction.
_REDUCTION_CHUNK = 16384
# Patch matrices of more elements than this (128 MiB of float32) are built in bands of
# output rows, one band at a time, so that a large image (SegNet's 7 x 7 convolutions on
# 360 x 480) does not need a patch matrix of gigabytes. ResNet-50 at batch 8 stays below.
_PATCH_BUDGET = 1 << 25


def _is_depthwise(W, groups):
    return groups > 1 and W.shape[1] == 1


def correlate(x, W, out_size, stride, pad, dilate, groups):
    """Convolution forward without bias: (N, C, H, W) -> (N, O, out_h, out_w)."""
    if _is_depthwise(W, groups):
        return _correlate_depthwise(x, W, out_size, stride, pad, dilate)
    bands = _output_bands(x.shape[:2], W.shape[2:], out_size)
    if len(bands) > 1 and groups == 1 and tuple(stride) == (1, 1):
        return _correlate_by_kernel_rows(x, W, out_size, pad, dilate)
    if len(bands) > 1:
        return _correlate_in_bands(x, W, out_size, stride, pad, dilate, groups, bands)
    out_c = W.shape[0]
    col = _patch_matrix(x, W.shape[2:], out_size, stride, pad, dilate, groups)
    y = _group_matmul(W.reshape(groups, out_c // groups, col.shape[1]), col)
    return _batch_major(y, x.shape[0], out_size)


def correlate_transpose(gy, W, in_size, stride, pad, dilate, groups):
    """The adjoint of ``correlate`` in x: (N, O, out_h, out_w) -> (N, C, H, W)."""
    if _is_depthwise(W, groups):
        return _correlate_transpose_depthwise(gy, W, in_size, stride, pad, dilate, groups)
    n, out_c, out_h, out_w = gy.shape
    _, channels_per_group, kh, kw = W.shape
    bands = _output_bands((n, groups * channels_per_group), (kh, kw), (out_h, out_w))
    if len(bands) > 1:
        return _correlate_transpose_in_bands(gy, W, in_size, stride, pad, dilate, groups, bands)
    weight = W.reshape(groups, out_c // groups, channels_per_group * kh * kw)
    weight, gy_matrix = weight.transpose(0, 2, 1), _channel_major(gy, groups)
    pointwise = (kh, kw) == (1, 1) and tuple(stride) == (1, 1) and tuple(pad) == (0, 0)
    if pointwise and (out_h, out_w) == tuple(in_size):
        return _batch_major(_group_matmul(weight, gy_matrix), n, in_size)
    # The columns (a patch matrix's shape) are summed into a new image by col2im and
    # dropped; no patch matrix is alive meanwhile, so they share its scratch buffer.
    columns = workspace.scratch('patches', weight.shape[:2] + gy_matrix.shape[2:], gy.dtype,
                                backend.get_array_module(gy, W))
    col = _group_matmul(weight, gy_matrix, out=columns)
    col = col.reshape(groups * channels_per_group, kh, kw, n, out_h, out_w)
    return im2col_module.col2im(col.transpose(3, 0, 1, 2, 4, 5), in_size, stride, pad, dilate)


def correlate_grad_weight(x, gy, ksize, stride, pad, dilate, groups):
    """The adjoint of ``correlate`` in W: gW (O, C / groups, kh, kw) from x and gy."""
    channels = x.shape[1]
    if groups > 1 and channels == groups:
        return _correlate_grad_weight_depthwise(x, gy, ksize, stride, pad, dilate)
    bands = _output_bands(x.shape[:2], ksize, gy.shape[2:])
    if len(bands) > 1:
        return _correlate_grad_weight_in_bands(x, gy, ksize, stride, pad, dilate, groups, bands)
    col = _patch_matrix(x, ksize, gy.shape[2:], stride, pad, dilate, groups)
    gW = _group_matmul_long_reduction(_channel_major(gy, groups), col.transpose(0, 2, 1))
    return gW.reshape((gy.shape[1], channels // groups) + tuple(ksize))


def _output_bands(batch_and_channels, ksize, out_size):
    """Split the output rows into bands whose patch matrices fit _PATCH_BUDGET."""
    n, channels = batch_and_channels
    per_row = max(1, n * channels * ksize[0] * ksize[1] * out_size[1])
    rows = max(1, _PATCH_BUDGET // per_row)
    if rows >= out_size[0]:
        return [(0, out_size[0])]  # the common case: one band
    return [(top, min(top + rows, out_size[0])) for top in range(0, out_size[0], rows)]


def _band_input_rows(band, ksize, stride, dilate):
    """The rows of the padded image that output rows [top, bottom) read."""
    top, bottom = band
    return slice(top * stride[0], (bottom - 1) * stride[0] + (ksize[0] - 1) * dilate[0] + 1)


def _correlate_by_kernel_rows(x, W, out_size, pad, dilate):
    """Stride-1 forward for large images without a full patch matrix.

    NOTE: the images are stacked vertically, padded, and flattened per channel (row
    length full_w). The window of output position t starts at flat index t, so kernel
    offset (i, j) reads flat[t + i * dy * full_w + j * dx]. A block of the kw column
    shifts, (C * kw, T), is copied once; kernel row i is then the same block read
    i * dy * full_w further on, so each kernel row is one matmul on a slice of it. That
    copies kw, not kh * kw, shifted images (7 times less for SegNet's 7 x 7 layers).
    Outputs are computed over the whole padded grid and cropped; the rows that straddle
    two stacked images are dropped.
    """
    xp = backend.get_array_module(x, W)
    n, channels, h, w = x.shape
    out_c, _, kh, kw = W.shape
    (out_h, out_w), (dy, dx) = out_size, dilate
    full_h, full_w = im2col_module.padded_shape((h, w), (kh, kw), out_size, (1, 1), pad,
                                                dilate)
    spare = (kh - 1) * dy + 1  # keeps the reads of the last image's rows inside the array
    length = (n * full_h + spare) * full_w - (kw - 1) * dx
    n_out = n * full_h * full_w
    y = workspace.scratch('row_sums', (out_c, n_out), x.dtype, xp)  # cropped into a copy
    # Channels are taken in chunks whose column shifts fit in scratch memory (PSPNet's
    # 4096-channel 3 x 3 layer would need 845 MB at once); each chunk's kernel rows are
    # added into y.
    chunk = max(1, min(channels, workspace.MAX_BYTES // (x.dtype.itemsize * kw * length)))
    n_products = -(-channels // chunk) * kh
    term = workspace.scratch('row_terms', (out_c, n_out), x.dtype, xp) if n_products > 1 else None
    first = True
    for low in range(0, channels, chunk):
        high = min(channels, low + chunk)
        block = workspace.scratch('patches', (high - low, kw, length), x.dtype, xp)
        _fill_column_shifts(block, x[:, low:high], (full_h, full_w), pad, spare, dx)
        block = block.reshape((high - low) * kw, length)
        for i in range(kh):
            weight = xp.ascontiguousarray(W[:, low:high, i, :]).reshape(out_c, -1)
            start = i * dy * full_w
            gemm.matmul(weight, block[:, start:start + n_out], out=y if first else term)
            if not first:
                _add_in_place(y, term)
            first = False
    # A new array (y is scratch memory), channel-major as the matmul path's output.
    result = xp.empty((out_c, n, out_h, out_w), dtype=x.dtype)
    cropped = y.reshape(out_c, n, full_h, full_w)[:, :, :out_h, :out_w]
    im2col_module.contiguous(cropped, out=result)
    return result.transpose(1, 0, 2, 3)


def _fill_column_shifts(block, x, full_size, pad, spare, dx):
    """block[c, j] = channel c of the stacked, padded images, flattened, from j * dx on.

    The images are padded to ``full_size``, stacked vertically with ``spare`` zero rows
    below, and flattened per channel; on NumPy each task pads and shifts a slice of
    channels while it is in cache.
    """
    xp = backend.get_array_module(x)
    n, channels, h, w = x.shape
    (full_h, full_w), (ph, pw) = full_size, pad
    kw, length = block.shape[1:]
    images = x.transpose(1, 0, 2, 3)

    def fill(start, stop):
        stacked = xp.zeros((stop - start, n * full_h + spare, full_w), dtype=x.dtype)
        grid = stacked[:, :n * full_h].reshape(stop - start, n, full_h, full_w)
        grid[:, :, ph:ph + h, pw:pw + w] = images[start:stop]
        flat = stacked.reshape(stop - start, -1)
        for j in range(kw):
            block[start:stop, j] = flat[:, j * dx:j * dx + length]

    if xp is not numpy:
        fill(0, channels)
        return
    per_channel = (n * full_h + spare) * full_w * (kw + 1)
    parallel.run([functools.partial(fill, start, stop)
                  for start, stop in parallel.ranges(channels, per_channel)])


def _add_in_place(y, term):
    """y += term, shared among threads on NumPy."""
    if backend.get_array_module(y) is numpy:
        parallel.elementwise(lambda y, term: numpy.add(y, term, out=y), y, term)
    else:
        y += term


def _correlate_in_bands(x, W, out_size, stride, pad, dilate, groups, bands):
    xp = backend.get_array_module(x, W)
    ksize = W.shape[2:]
    padded = im2col_module.pad_image(x, ksize, out_size, stride, pad, dilate)
    y = xp.empty((x.shape[0], W.shape[0]) + tuple(out_size), dtype=x.dtype)
    for band in bands:
        rows = _band_input_rows(band, ksize, stride, dilate)
        y[:, :, band[0]:band[1]] = correlate(padded[:, :, rows], W, (band[1] - band[0],
                                             out_size[1]), stride, (0, 0), dilate, groups)
    return y


def _correlate_transpose_in_bands(gy, W, in_size, stride, pad, dilate, groups, bands):
    xp = backend.get_array_module(gy, W)
    ksize = W.shape[2:]
    full = im2col_module.padded_shape(in_size, ksize, gy.shape[2:], stride, pad, dilate)
    image = xp.zeros((gy.shape[0], groups * W.shape[1]) + full, dtype=gy.dtype)
    for band in bands:
        rows = _band_input_rows(band, ksize, stride, dilate)
        band_size = (rows.stop - rows.start, full[1])
        image[:, :, rows] += correlate_transpose(gy[:, :, band[0]:band[1]], W, band_size,
                                                 stride, (0, 0), dilate, groups)
    return im2col_module.crop_image(image, in_size, pad)


def _correlate_grad_weight_in_bands(x, gy, ksize, stride, pad, dilate, groups, bands):
    padded = im2col_module.pad_image(x, ksize, gy.shape[2:], stride, pad, dilate)
    gW = None
    for band in bands:
        rows = _band_input_rows(band, ksize, stride, dilate)
        part = correlate_grad_weight(padded[:, :, rows], gy[:, :, band[0]:band[1]], ksize,
                                     stride, (0, 0), dilate, groups)
        gW = part if gW is None else gW + part
    return gW


def _patch_matrix(x, ksize, out_size, stride, pad, dilate, groups):
    """Patches of x as a C-contiguous (groups, C / groups * kh * kw, N * out_h * out_w).

    NOTE: channel-major, so that one matmul per group covers the whole batch. A matmul
    per image (no transposing copies) was measured too: 1.5 to 5 times slower on two
    shared cores, since every BLAS call synchronises its threads, and far below peak for
    the small images of deep layers. For a 1x1 kernel without padding the view is x
    itself, so this is a plain transposing copy (none at all for a batch of one).

    The copy lies in the thread's scratch memory (workspace.py): the caller reads it
    before it makes the next patch matrix, and keeps no reference to it.
    """
    n, channels = x.shape[:2]
    col = im2col_module.im2col(x, ksize, out_size, stride, pad, dilate)
    col = col.transpose(1, 2, 3, 0, 4, 5)
    if not col.flags.c_contiguous:
        scratch = workspace.scratch('patches', col.shape, col.dtype,
                                    backend.get_array_module(x))
        col = im2col_module.contiguous(col, out=scratch)
    patch_len = channels // groups * ksize[0] * ksize[1]
    return col.reshape(groups, patch_len, n * out_size[0] * out_size[1])


def _channel_major(y, groups):
    """(N, C, H, W) -> C-contiguous (groups, C / groups, N * H * W)."""
    n, channels, h, w = y.shape
    y = im2col_module.contiguous(y.transpose(1, 0, 2, 3))
    return y.reshape(groups, channels // groups, n * h * w)


def _batch_major(y, n, size):
    """(groups, C / groups, N * H * W) -> an (N, C, H, W) view, laid out channel-major."""
    y = y.reshape((y.shape[0] * y.shape[1], n) + tuple(size))
    return y.transpose(1, 0, 2, 3)


def _group_matmul_long_reduction(a, b):
    """_group_matmul for a reduction axis (K = N * H * W) far longer than the output.

    NOTE: measured with 2-thread OpenBLAS on shared cores, a (64, 100352) x (100352, 147)
    matmul (conv1's gW at batch 8) ran 3 to 8 times slower than the same FLOPs in other
    shapes; a sum of matmuls over slices of K of length _REDUCTION_CHUNK did not.
    """
    length = a.shape[2]
    if length <= 2 * _REDUCTION_CHUNK:
        return _group_matmul(a, b)
    result = _group_matmul(a[:, :, :_REDUCTION_CHUNK], b[:, :_REDUCTION_CHUNK])
    for start in range(_REDUCTION_CHUNK, length, _REDUCTION_CHUNK):
        stop = start + _REDUCTION_CHUNK
        result += _group_matmul(a[:, :, start:stop], b[:, start:stop])
    return result


def _group_matmul(a, b, out=None):
    """Matmul of (groups, M, K) by (groups, K, L); one plain 2-D matmul when groups == 1.

    ``out``, when given, is the (groups, M, L) result to write.
    """
    if a.shape[0] == 1:
        return gemm.matmul(a[0], b[0], out=None if out is None else out[0])[None]
    return gemm.matmul(a, b, out=out)


def _correlate_depthwise(x, W, out_size, stride, pad, dilate):
    if tuple(stride) == (1, 1):
        return _correlate_depthwise_rows(x, W, out_size, pad, dilate)
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


def _correlate_depthwise_rows(x, W, out_size, pad, dilate):
    """Stride-1 depthwise forward on the flattened padded image.

    NOTE: with stride 1, what kernel offset (i, j) reads for all output rows is one
    contiguous run of the flattened padded image (of width full_w), starting at
    i * dy * full_w + j * dx. Computing the output over the whole padded width and
    dropping the extra columns at the end makes each multiply-add one long contiguous
    loop, instead of N * C * out_h loops of out_w elements (measured 1.3 to 1.6 times
    faster than the strided view on a (8, 128, 56, 56) 3x3 layer).
    """
    xp = backend.get_array_module(x, W)
    n, channels, h, w = x.shape
    out_c, _, kh, kw = W.shape
    (out_h, out_w), (ph, pw) = out_size, pad
    full_h, full_w = im2col_module.padded_shape(
        (h, w), (kh, kw), out_size, (1, 1), pad, dilate)
    # One spare row keeps the runs of the last offsets inside the array.
    flat = xp.zeros((n, channels, 1, (full_h + 1) * full_w), dtype=x.dtype)
    flat.reshape(n, channels, full_h + 1, full_w)[:, :, ph:ph + h, pw:pw + w] = x
    weight = W.reshape(channels, out_c // channels, kh, kw)
    length = out_h * full_w
    y = xp.zeros((n, channels, out_c // channels, length), dtype=x.dtype)
    term = xp.empty_like(y)
    for i in range(kh):
        for j in range(kw):
            start = i * dilate[0] * full_w + j * dilate[1]
            xp.multiply(flat[..., start:start + length], weight[:, :, i, j, None], out=term)
            y += term
    y = y.reshape(n, out_c, out_h, full_w)[..., :out_w]
    return xp.ascontiguousarray(y)


def _einsum(subscripts, a, b):
    """``xp.einsum`` of two arrays of one dtype; float16 and bfloat16 go through float32.

    NOTE: NumPy's einsum refuses bfloat16, and a 16-bit accumulator would lose the small
    terms of these sums (a device array reaches here; NumPy's are widened by the node).
    """
    xp = backend.get_array_module(a, b)
    if a.dtype.itemsize != 2:
        return xp.einsum(subscripts, a, b)
    wide = xp.einsum(subscripts, a.astype(numpy.float32), b.astype(numpy.float32))
    return wide.astype(a.dtype)


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
            image[:, :, rows, cols] += _einsum('ncmhw,cm->nchw', gy, weight[:, :, i, j])
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
            gW[:, :, i, j] = _einsum('nchw,ncmhw->cm', col[:, :, i, j], gy)
    return gW.reshape((out_c, 1) + tuple(ksize))
