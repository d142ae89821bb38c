"""Patch extraction shared by convolution and deconvolution (private to connection/).

Notation: an image batch is (N, C, H, W); a kernel is (kh, kw) = (kernel height, kernel
width); ``stride``, ``pad`` and ``dilate`` are (vertical, horizontal) pairs. A "col" array
is (N, C, kh, kw, out_h, out_w): ``col[n, c, i, j, y, x]`` is the input pixel
``(y * stride[0] + i * dilate[0] - pad[0], x * stride[1] + j * dilate[1] - pad[1])`` of
channel c, zero outside the image.
"""

import functools

import numpy

from cvzoo.core import backend, parallel


def get_conv_outsize(size, k, s, p, cover_all=False, d=1):
    """Output length of a convolution along one axis (Chainer's rule).

    Args:
        size (int): input length.
        k (int): kernel length.
        s (int): stride.
        p (int): padding on each side.
        cover_all (bool): add windows so every input pixel is covered, padding the end.
        d (int): dilation.

    Returns:
        int: the output length (may be <= 0 for an input too small).
    """
    dilated = k + (k - 1) * (d - 1)
    if cover_all:
        return (size + p * 2 - dilated + s - 1) // s + 1
    return (size + p * 2 - dilated) // s + 1


def get_deconv_outsize(size, k, s, p, cover_all=False, d=1):
    """Output length of a deconvolution along one axis (the inverse of get_conv_outsize).

    Args: as in get_conv_outsize, with ``size`` the deconvolution's input length.

    Returns:
        int: the output length.
    """
    dilated = k + (k - 1) * (d - 1)
    if cover_all:
        return s * (size - 1) + dilated - s + 1 - 2 * p
    return s * (size - 1) + dilated - 2 * p


def padded_shape(in_size, ksize, out_size, stride, pad, dilate):
    """(H, W) of the zero-padded image that every window of the output fits in.

    The leading pad is ``pad``; the trailing one is ``pad`` or more, when cover_all (or an
    explicit deconvolution outsize) asks for windows that reach past the image.
    """
    # NOTE: unrolled for the two axes: each convolution asks, forward and backward
    (h, w), (kh, kw), (out_h, out_w) = in_size, ksize, out_size
    (sy, sx), (ph, pw), (dy, dx) = stride, pad, dilate
    return (max(h + 2 * ph, (out_h - 1) * sy + (kh - 1) * dy + 1),
            max(w + 2 * pw, (out_w - 1) * sx + (kw - 1) * dx + 1))


def is_channel_major(x):
    """True when the (N, C, H, W) array ``x`` lies in memory as a C-contiguous (C, N, H, W).

    Convolutions return their output in this layout (see correlation.py); a batch of one
    is both this and C-contiguous.
    """
    return x.shape[0] > 1 and x.shape[1] > 1 and x.transpose(1, 0, 2, 3).flags.c_contiguous


def zeros_image(shape, dtype, xp, channel_major):
    """Zeros of the (N, C, H, W) ``shape``, laid out channel-major when asked."""
    if not channel_major:
        return xp.zeros(shape, dtype=dtype)
    n, c = shape[:2]
    return xp.zeros((c, n) + tuple(shape[2:]), dtype=dtype).transpose(1, 0, 2, 3)


def pad_image(x, ksize, out_size, stride, pad, dilate):
    """Return ``x`` zero-padded as padded_shape says (``x`` itself when nothing is needed).

    The padded copy keeps x's layout (C-contiguous or channel-major).
    """
    n, c, h, w = x.shape
    ph, pw = pad
    full_h, full_w = padded_shape((h, w), ksize, out_size, stride, pad, dilate)
    if (full_h, full_w) == (h, w):
        return x
    xp = backend.get_array_module(x)
    result = zeros_image((n, c, full_h, full_w), x.dtype, xp, is_channel_major(x))
    inner = result[:, :, ph:ph + h, pw:pw + w]
    if xp is numpy:
        parallel.copy(inner, x)
    else:
        inner[...] = x
    return result


def offset_slices(i, j, out_size, stride, dilate):
    """Slices of a padded image read by kernel offset (i, j) for every output pixel."""
    top, left = i * dilate[0], j * dilate[1]
    return (slice(top, top + (out_size[0] - 1) * stride[0] + 1, stride[0]),
            slice(left, left + (out_size[1] - 1) * stride[1] + 1, stride[1]))


def im2col(x, ksize, out_size, stride, pad, dilate):
    """Patches of ``x`` as a strided view (N, C, kh, kw, out_h, out_w) of the padded image.

    The view shares memory with the padded copy (or with ``x`` when no padding is
    needed): copy it (e.g. by a reshape) before writing to it.

    Args:
        x (array): (N, C, H, W) images, any memory layout.
        ksize, out_size, stride, pad, dilate (pairs of int): as in the module docstring.

    Returns:
        array: the col view.
    """
    xp = backend.get_array_module(x)
    padded = pad_image(x, ksize, out_size, stride, pad, dilate)
    stride_n, stride_c, stride_h, stride_w = padded.strides
    shape = x.shape[:2] + tuple(ksize) + tuple(out_size)
    strides = (stride_n, stride_c, dilate[0] * stride_h, dilate[1] * stride_w,
               stride[0] * stride_h, stride[1] * stride_w)
    return xp.lib.stride_tricks.as_strided(padded, shape, strides)


def col2im(col, in_size, stride, pad, dilate):
    """Sum a col array back onto the image it was cut from (the adjoint of im2col).

    Args:
        col (array): (N, C, kh, kw, out_h, out_w).
        in_size (pair of int): (H, W) of the image.
        stride, pad, dilate (pairs of int): as in the module docstring.

    Returns:
        array: (N, C, H, W) of col's dtype, laid out channel-major (see
        is_channel_major) when col's channel axis is the outer one in memory, else
        C-contiguous.
    """
    xp = backend.get_array_module(col)
    n, c, kh, kw, out_h, out_w = col.shape
    full = padded_shape(in_size, (kh, kw), (out_h, out_w), stride, pad, dilate)
    # The image takes the order of the batch and channel axes in col's memory.
    channel_major = n > 1 and c > 1 and col.strides[1] > col.strides[0]
    image = zeros_image((n, c) + full, col.dtype, xp, channel_major)

    def accumulate(start, stop):
        # NOTE: a loop over the kh * kw kernel offsets only; each step is one strided
        # add, over a slice of channels small enough to stay in cache between steps.
        # ``view += term`` written as an add into the view: the same sum, without the
        # copy of the view onto itself that ``image[index] += term`` makes after the add
        # (one more kernel launch per offset on a GPU)
        part = image[:, start:stop]
        for i in range(kh):
            for j in range(kw):
                rows, cols = offset_slices(i, j, (out_h, out_w), stride, dilate)
                view = part[:, :, rows, cols]
                xp.add(view, col[:, start:stop, i, j], out=view)

    if xp is numpy and image.size >= parallel.MIN_ELEMENTS:
        tasks = [functools.partial(accumulate, start, stop)
                 for start, stop in parallel.ranges(c, n * full[0] * full[1])]
        parallel.run(tasks)
    else:
        accumulate(0, c)
    return crop_image(image, in_size, pad)


def crop_image(image, in_size, pad):
    """Cut the (H, W) image out of its padded version; a copy in the image's layout."""
    (h, w), (ph, pw) = in_size, pad
    if image.shape[2:] == (h, w):
        return image
    if is_channel_major(image):
        crop = image.transpose(1, 0, 2, 3)[:, :, ph:ph + h, pw:pw + w]
        return contiguous(crop).transpose(1, 0, 2, 3)
    return contiguous(image[:, :, ph:ph + h, pw:pw + w])


def contiguous(array, out=None):
    """A C-contiguous copy of ``array``; on NumPy the copy is shared among threads.

    Args:
        array (array): any layout.
        out (array or None): where to copy to, C-contiguous, of array's shape and dtype
            (e.g. workspace scratch memory); by default a new array, or ``array`` itself
            when it is C-contiguous already.

    Returns:
        array: the copy (``out`` when given).
    """
    xp = backend.get_array_module(array)
    if out is None and (xp is not numpy or array.flags.c_contiguous):
        return xp.ascontiguousarray(array)
    if out is None:
        out = numpy.empty(array.shape, array.dtype)
    if xp is numpy:
        parallel.copy(out, array)
    else:
        out[...] = array
    return out


def as_pair(value, name, minimum):
    """Return ``value`` (an int or a pair of ints, each >= ``minimum``) as a pair.

    Raises:
        TypeError: when ``value`` is neither an int nor a pair of ints.
        ValueError: when an entry is below ``minimum``.
    """
    if type(value) is int:  # the common case, without the general checks' calls
        if value < minimum:
            raise ValueError(f'{name}: expected values >= {minimum}, got {value!r}')
        return value, value
    if type(value) is tuple and len(value) == 2 and type(value[0]) is type(value[1]) is int:
        if value[0] < minimum or value[1] < minimum:
            raise ValueError(f'{name}: expected values >= {minimum}, got {value!r}')
        return value
    pair = (value, value) if _is_int(value) else value
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(map(_is_int, pair))):
        raise TypeError(f'{name}: expected an int or a pair of ints, got {value!r}')
    if min(pair) < minimum:
        raise ValueError(f'{name}: expected values >= {minimum}, got {value!r}')
    return int(pair[0]), int(pair[1])


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool) or (
        hasattr(value, 'dtype') and getattr(value, 'ndim', 1) == 0 and value.dtype.kind in 'iu')


def check_image_and_weight(what, x, W, b):
    """Validate the ranks and dtypes of (x, W, b) of a 2-D (de)convolution named ``what``.

    Raises:
        ValueError: x or W not 4-D, or b not 1-D.
        TypeError: a non-float array, or dtypes that differ.
    """
    x_dtype = x.dtype
    for name, array, ndim in (('x', x, 4), ('W', W, 4), ('b', b, 1)):
        if array is None:
            continue
        dtype = array.dtype
        if not backend.is_float_dtype(dtype):
            raise TypeError(f'{what}: {name} must be a float array, got dtype {dtype}')
        if dtype != x_dtype:
            raise TypeError(
                f'{what}: {name}.dtype must equal x.dtype ({x_dtype}), got {dtype}')
        if array.ndim != ndim:
            raise ValueError(
                f'{what}: {name} must have {ndim} axes, got shape {tuple(array.shape)}')


def check_bias(what, b, out_channels):
    """Raise ValueError unless ``b`` is None or of shape (out_channels,)."""
    if b is not None and b.shape[0] != out_channels:
        raise ValueError(
            f'{what}: b must have shape ({out_channels},) (the output channels), '
            f'got {tuple(b.shape)}')
