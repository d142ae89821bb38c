"""deconvolution_2d: two-dimensional transposed convolution of NCHW images."""

import numpy

from cvzoo.core import function_node, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.core.cudnn import convolution as cudnn_convolution
from cvzoo.core.functions.connection import convolution_2d as convolution_2d_module
from cvzoo.core.functions.connection import correlation
from cvzoo.core.functions.connection import im2col
from cvzoo.core.functions.math import sum as sum_module


class Deconvolution2D(function_node.FunctionNode):
    """y = correlate_transpose(x, W) + b: the adjoint of Convolution2D in its input."""

    def __init__(self, stride, pad, dilate, groups, out_size):
        self.stride = stride
        self.pad = pad
        self.dilate = dilate
        self.groups = groups
        self.out_size = tuple(out_size)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return mixed_precision.compute_in_float32_on_host(self._transpose_correlate, inputs)

    def _transpose_correlate(self, inputs):
        x, W = inputs[:2]
        args = (self.out_size, self.stride, self.pad, self.dilate, self.groups)
        y = None if x.__class__ is numpy.ndarray else (  # None off cuDNN
            cudnn_convolution.correlate_transpose(x, W, *args))
        y = correlation.correlate_transpose(x, W, *args) if y is None else y
        if len(inputs) == 3:
            y += inputs[2].reshape(1, -1, 1, 1)
        return y,

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy, = grad_outputs
        result = []
        if 0 in indexes:
            result.append(convolution_2d_module.Convolution2D(
                self.stride, self.pad, self.dilate, self.groups, x.shape[2:]
            ).apply((gy, W))[0])
        if 1 in indexes:
            # NOTE: <deconv(x, W), gy> = <x, conv(gy, W)>, so gW is the convolution's
            # weight gradient with gy as its input and x as its output gradient.
            grad_w_node = convolution_2d_module._Convolution2DGradW(self, W.shape[2:])
            result.append(grad_w_node.apply((gy, x))[0])
        if 2 in indexes:
            result.append(sum_module.sum(gy, axis=(0, 2, 3)))
        return tuple(result)


def deconvolution_2d(x, W, b=None, stride=1, pad=0, outsize=None, *, dilate=1, groups=1):
    """Two-dimensional deconvolution (transposed convolution), the adjoint of convolution_2d.

    ``deconvolution_2d(x, W)`` equals the gradient of ``convolution_2d(z, W)`` with respect
    to z, for an output gradient x. Without ``outsize`` the output size along each axis
    is ``s * (in - 1) + (k + (k - 1) * (d - 1)) - 2 * p``; ``outsize`` may ask for up to
    ``s - 1`` more rows or columns (those a strided convolution would drop).
    Double backprop is supported. Under ``cvzoo.core.autocast`` x, W and b are cast to its
    dtype, and so is the result.

    Args:
        x (Variable or array): (N, C_in, H, W) float images.
        W (Variable or array): (C_in, C_out / groups, kh, kw) filters, of x's dtype
            (Chainer's layout: the transpose of the matching convolution's filters).
        b (Variable, array or None): (C_out,) bias.
        stride (int or pair of int): (sy, sx), >= 1.
        pad (int or pair of int): (ph, pw) cropped from each side of the output, >= 0.
        outsize (None or pair of int): (out_h, out_w); None computes it as above.
        dilate (int or pair of int): (dy, dx) spacing of the kernel taps, >= 1.
        groups (int): number of channel groups; C_in must be a multiple of it.

    Returns:
        Variable: (N, C_out, out_h, out_w) of x's dtype.

    Raises:
        ValueError: mismatched channels, a bad bias shape, or an outsize that a
            convolution with these arguments would not map back to (H, W).
        TypeError: non-float or mixed dtypes, or non-integer arguments.

    >>> import numpy as np
    >>> x = np.ones((1, 3, 3, 3), np.float32)
    >>> W = np.ones((3, 2, 3, 3), np.float32)
    >>> deconvolution_2d(x, W, stride=2, pad=1).shape
    (1, 2, 5, 5)
    >>> deconvolution_2d(x, W, stride=2, pad=1, outsize=(6, 6)).shape
    (1, 2, 6, 6)
    """
    x, W = variable_module.as_variable(x), variable_module.as_variable(W)
    b = None if b is None else variable_module.as_variable(b)
    x, W, b = mixed_precision.cast_to_low_precision(x, W, b)
    im2col.check_image_and_weight('deconvolution_2d', x, W, b)
    stride = im2col.as_pair(stride, 'deconvolution_2d: stride', 1)
    pad = im2col.as_pair(pad, 'deconvolution_2d: pad', 0)
    dilate = im2col.as_pair(dilate, 'deconvolution_2d: dilate', 1)
    groups = im2col.as_pair(groups, 'deconvolution_2d: groups', 1)[0]
    if x.shape[1] != W.shape[0] or W.shape[0] % groups:
        raise ValueError(
            f'deconvolution_2d: in_channels x.shape[1] must equal W.shape[0] and be a '
            f'multiple of groups={groups}, got x.shape={tuple(x.shape)}, '
            f'W.shape={tuple(W.shape)}')
    im2col.check_bias('deconvolution_2d', b, W.shape[1] * groups)
    out_size = _output_size(x.shape[2:], W.shape[2:], stride, pad, dilate, outsize)
    node = Deconvolution2D(stride, pad, dilate, groups, out_size)
    return node.apply((x, W) if b is None else (x, W, b))[0]


def _output_size(in_size, ksize, stride, pad, dilate, outsize):
    """Compute or check the output (H, W) of deconvolution_2d."""
    axes = tuple(zip(in_size, ksize, stride, pad, dilate))
    if outsize is None:
        out_size = tuple(im2col.get_deconv_outsize(n, k, s, p, d=d) for n, k, s, p, d in axes)
        if min(out_size) < 1:
            raise ValueError(
                f'deconvolution_2d: the output size {out_size} is empty; pad={pad} is too '
                f'large for the input size {tuple(in_size)} and kernel {tuple(ksize)}')
        return out_size
    out_size = im2col.as_pair(outsize, 'deconvolution_2d: outsize', 1)
    for out, (n, k, s, p, d) in zip(out_size, axes):
        lower = im2col.get_conv_outsize(out, k, s, p, False, d)
        upper = im2col.get_conv_outsize(out, k, s, p, True, d)
        if not lower <= n <= upper:
            raise ValueError(
                f'deconvolution_2d: outsize={tuple(outsize)} does not match the input size '
                f'{tuple(in_size)}: a convolution of an output of length {out} gives '
                f'{lower} (or {upper} with cover_all), not {n}')
    return out_size
