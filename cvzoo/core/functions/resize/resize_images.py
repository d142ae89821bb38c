"""resize_images: bilinear or nearest-neighbour resizing of (N, C, H, W) maps.

Both modes are separable and linear: ``y = A_h x A_w^T`` with small interpolation
matrices ``A_h`` (out_H, H) and ``A_w`` (out_W, W), one row per output line holding the
weights of the input lines it reads. Forward is two matmuls and backward is the same
with the transposed matrices, so every order of derivative comes for free.
"""

import functools

import numpy

from cvzoo.core import backend, function_node, mixed_precision

MODES = ('bilinear', 'nearest')


def _source_coords(n_in, n_out, align_corners):
    """Position, in input pixels, that each output pixel samples (float64, on the host)."""
    out = numpy.arange(n_out, dtype=numpy.float64)
    if align_corners:
        # NOTE: the first and last pixel centres of input and output coincide.
        return out * ((n_in - 1) / (n_out - 1)) if n_out > 1 else numpy.zeros(n_out)
    # NOTE: half-pixel centres, as torch's interpolate(align_corners=False): output pixel
    # i covers [i, i + 1) * n_in / n_out of the input; its centre is sampled.
    return numpy.maximum((out + 0.5) * (n_in / n_out) - 0.5, 0)


def interpolation_matrix(n_in, n_out, mode, align_corners):
    """The (n_out, n_in) float64 matrix resizing one axis (on the host).

    bilinear: two taps ``floor(u)`` and ``floor(u) + 1`` (clamped) weighted by distance.
    nearest: with align_corners, the nearest pixel ``round(u)``; without, torch's
    ``floor(i * n_in / n_out)``.
    """
    matrix = numpy.zeros((n_out, n_in))
    rows = numpy.arange(n_out)
    if mode == 'nearest':
        if align_corners:
            src = numpy.floor(_source_coords(n_in, n_out, True) + 0.5)
        else:
            src = numpy.floor(rows * (n_in / n_out))
        matrix[rows, numpy.minimum(src, n_in - 1).astype(numpy.intp)] = 1
        return matrix
    src = numpy.minimum(_source_coords(n_in, n_out, align_corners), n_in - 1)
    low = numpy.floor(src).astype(numpy.intp)
    high = numpy.minimum(low + 1, n_in - 1)
    weight_high = src - low
    numpy.add.at(matrix, (rows, low), 1 - weight_high)
    numpy.add.at(matrix, (rows, high), weight_high)
    return matrix


class ResizeImages(function_node.FunctionNode):
    """``y = A_h x A_w^T`` for (N, C, H, W) x; its gradient is the same with A^T."""

    def __init__(self, matrix_h, matrix_w):
        self.matrix_h = matrix_h
        self.matrix_w = matrix_w

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        n, c, h, w = x.shape
        (out_h, _), (out_w, _) = self.matrix_h.shape, self.matrix_w.shape
        # NOTE: each step is one large 2-D matmul; a broadcast matmul of the small matrix
        # against (N * C) stacked maps is several times slower on numpy.
        rows = x.reshape(n * c * h, w) @ self.matrix_w.T
        columns = rows.reshape(n * c, h, out_w).transpose(0, 2, 1).reshape(-1, h)
        y = (columns @ self.matrix_h.T).reshape(n, c, out_w, out_h).transpose(0, 1, 3, 2)
        return xp.ascontiguousarray(y),

    def backward(self, indexes, grad_outputs):
        return ResizeImages(self.matrix_h.T, self.matrix_w.T).apply(grad_outputs)


def resize_images(x, output_shape, mode='bilinear', align_corners=True):
    """Resize images to ``output_shape`` by bilinear or nearest-neighbour interpolation.

    ``align_corners=True`` (Chainer's default) maps the corner pixel centres onto each
    other: output pixel i samples input position ``i * (H - 1) / (out_H - 1)``.
    ``align_corners=False`` uses half-pixel centres,
    ``(i + 0.5) * H / out_H - 0.5`` clamped at 0, exactly as torch's
    ``F.interpolate(mode='bilinear', align_corners=False)``; with ``mode='nearest'`` it
    picks ``floor(i * H / out_H)``, as torch's ``mode='nearest'``. Supports double
    backprop. Cost: two matmuls, O(out_H * W * (H + out_W)) per channel.

    Args:
        x (Variable or array): (N, C, H, W) float, H and W >= 1.
        output_shape (pair of int): (out_H, out_W), both >= 1.
        mode (str): 'bilinear' or 'nearest'.
        align_corners (bool): see above.

    Returns:
        Variable: (N, C, out_H, out_W), the dtype of x (float32 under ``autocast``, which
        resizes 16-bit inputs in float32, as one of mixed_precision.FLOAT32_FUNCTIONS).

    >>> import numpy as np
    >>> x = np.array([[[[0, 1]]]], dtype=np.float32)
    >>> resize_images(x, (1, 3)).array
    array([[[[0. , 0.5, 1. ]]]], dtype=float32)
    >>> resize_images(x, (1, 4), align_corners=False).array
    array([[[[0.  , 0.25, 0.75, 1.  ]]]], dtype=float32)
    """
    if x.ndim != 4 or min(x.shape[2:]) < 1:
        raise ValueError(f'resize_images: x must be (N, C, H, W) with H, W >= 1, got {x.shape}')
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'resize_images: x must be floating point, got {x.dtype}')
    if (not isinstance(output_shape, (tuple, list)) or len(output_shape) != 2
            or not all(isinstance(n, (int, numpy.integer)) and n >= 1 for n in output_shape)):
        raise ValueError(
            f'resize_images: output_shape must be a pair of positive ints, got {output_shape!r}')
    if mode not in MODES:
        raise ValueError(f'resize_images: mode must be one of {MODES}, got {mode!r}')
    x, = mixed_precision.cast_to_float32(x)  # under autocast: no 16-bit product on the host
    device = backend.get_device_from_array(x)
    matrix_h, matrix_w = [
        _matrix_on(n_in, int(n_out), mode, align_corners, numpy.dtype(x.dtype).str, device)
        for n_in, n_out in zip(x.shape[2:], output_shape)]
    return ResizeImages(matrix_h, matrix_w).apply((x,))[0]


def _matrix_on(n_in, n_out, mode, align_corners, dtype, device):
    """interpolation_matrix as ``dtype`` on ``device``; on a GPU copied there once per
    size (a copy from the host inside a training step would keep it out of a CUDA graph)."""
    if device.kind == 'cpu':
        return interpolation_matrix(n_in, n_out, mode, align_corners).astype(dtype)
    return _cached_device_matrix(n_in, n_out, mode, align_corners, dtype, str(device))


@functools.lru_cache(maxsize=256)
def _cached_device_matrix(n_in, n_out, mode, align_corners, dtype, device):
    return backend.to_device(
        interpolation_matrix(n_in, n_out, mode, align_corners).astype(dtype), device)
