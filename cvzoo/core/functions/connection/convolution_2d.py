"""convolution_2d: two-dimensional convolution (cross-correlation) of NCHW images."""

import numpy

from cvzoo.core import function_node, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.core.config import config
from cvzoo.core.cudnn import convolution as cudnn_convolution
from cvzoo.core.functions.connection import correlation, im2col
from cvzoo.core.functions.connection import deconvolution_2d as deconvolution_2d_module
from cvzoo.core.functions.math import sum as sum_module


class Convolution2D(function_node.FunctionNode):
    """y = correlate(x, W) + b, with the output size fixed in advance.

    The output size (rather than cover_all) is what the node keeps, so that
    deconvolution_2d's backward can ask for exactly the size of its input.
    """

    def __init__(self, stride, pad, dilate, groups, out_size):
        self.stride = stride
        self.pad = pad
        self.dilate = dilate
        self.groups = groups
        self.out_size = out_size

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return mixed_precision.compute_in_float32_on_host(self._correlate, inputs)

    def _correlate(self, inputs):
        x, W = inputs[:2]
        args = (self.out_size, self.stride, self.pad, self.dilate, self.groups)
        # None off cuDNN; NumPy arrays never ask (each call counts on the CPU's hot path)
        y = None if x.__class__ is numpy.ndarray else cudnn_convolution.correlate(x, W, *args)
        y = correlation.correlate(x, W, *args) if y is None else y
        if len(inputs) == 3:
            y += inputs[2].reshape(1, -1, 1, 1)
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if not config.enable_backprop and 2 not in indexes:
            return self._first_order_gradients(indexes, gy.array)
        x, W = self.get_retained_inputs()
        result = []
        if 0 in indexes:
            result.append(deconvolution_2d_module.Deconvolution2D(
                self.stride, self.pad, self.dilate, self.groups, x.shape[2:]
            ).apply((gy, W))[0])
        if 1 in indexes:
            result.append(_Convolution2DGradW(self, W.shape[2:]).apply((x, gy))[0])
        if 2 in indexes:
            result.append(sum_module.sum(gy, axis=(0, 2, 3)))
        return tuple(result)


    def _first_order_gradients(self, indexes, gy):
        """gx and gW as arrays, by the forwards of the nodes backward applies otherwise."""
        x, W = self.retained_input_arrays()
        result = []
        if 0 in indexes:
            result.append(deconvolution_2d_module.Deconvolution2D(
                self.stride, self.pad, self.dilate, self.groups, x.shape[2:]
            ).forward((gy, W))[0])
        if 1 in indexes:
            result.append(_Convolution2DGradW(self, W.shape[2:]).forward((x, gy))[0])
        return tuple(result)


class _Convolution2DGradW(function_node.FunctionNode):
    """gW of a convolution from (x, gy); bilinear, so its own backward is two convolutions."""

    def __init__(self, parent, ksize):
        self.stride = parent.stride
        self.pad = parent.pad
        self.dilate = parent.dilate
        self.groups = parent.groups
        self.ksize = tuple(ksize)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return mixed_precision.compute_in_float32_on_host(self._correlate_grad_weight, inputs)

    def _correlate_grad_weight(self, inputs):
        x, gy = inputs
        args = (self.ksize, self.stride, self.pad, self.dilate, self.groups)
        gW = None if x.__class__ is numpy.ndarray else (  # None off cuDNN
            cudnn_convolution.correlate_grad_weight(x, gy, *args))
        return (correlation.correlate_grad_weight(x, gy, *args) if gW is None else gW),

    def backward(self, indexes, grad_outputs):
        x, gy = self.get_retained_inputs()
        ggW, = grad_outputs
        result = []
        if 0 in indexes:
            result.append(deconvolution_2d_module.Deconvolution2D(
                self.stride, self.pad, self.dilate, self.groups, x.shape[2:]
            ).apply((gy, ggW))[0])
        if 1 in indexes:
            result.append(Convolution2D(
                self.stride, self.pad, self.dilate, self.groups, gy.shape[2:]
            ).apply((x, ggW))[0])
        return tuple(result)


def convolution_2d(x, W, b=None, stride=1, pad=0, cover_all=False, *, dilate=1, groups=1):
    """Two-dimensional convolution (a cross-correlation, as in every CNN library).

    ``y[n, o, p, q] = b[o] + sum_{c, i, j} W[o, c, i, j] *
    x_padded[n, g(o) * C / groups + c, p * sy + i * dy, q * sx + j * dx]``, where g(o) is
    the group of output channel o. The output size along each axis is
    ``(H + 2 * ph - (kh + (kh - 1) * (dy - 1))) // sy + 1``; cover_all rounds the division
    up instead, padding the bottom/right edge, so that every input pixel is covered.

    Forward cuts patches with a strided view and runs one batched matmul (a 1x1 kernel
    without padding skips the patch copy); a depthwise convolution (one input channel
    per group) loops over the kernel offsets. Double backprop is supported. Under
    ``cvzoo.core.autocast`` x, W and b are cast to its dtype, and so is the result.

    Args:
        x (Variable or array): (N, C, H, W) float images.
        W (Variable or array): (O, C / groups, kh, kw) filters, of x's dtype.
        b (Variable, array or None): (O,) bias.
        stride (int or pair of int): (sy, sx), >= 1.
        pad (int or pair of int): (ph, pw) zeros added on each side, >= 0.
        cover_all (bool): round the output size up (see above).
        dilate (int or pair of int): (dy, dx) spacing of the kernel taps, >= 1.
        groups (int): number of channel groups; C and O must be multiples of it.

    Returns:
        Variable: (N, O, out_h, out_w) of x's dtype. Its memory is laid out
        channel-major, as a C-contiguous (O, N, out_h, out_w), straight from the matmul
        (C-contiguous for N = 1); ``numpy.ascontiguousarray`` gives C order when needed.

    Raises:
        ValueError: mismatched channels, a bad bias shape or an output size < 1.
        TypeError: non-float or mixed dtypes, or a non-integer stride/pad/dilate/groups.

    >>> import numpy as np
    >>> x = np.ones((1, 2, 5, 5), np.float32)
    >>> W = np.ones((3, 2, 3, 3), np.float32)
    >>> convolution_2d(x, W, stride=2, pad=1).shape
    (1, 3, 3, 3)
    """
    node, inputs = _make_node(x, W, b, stride, pad, cover_all, dilate, groups)
    return node.apply(inputs)[0]


def _make_node(x, W, b, stride, pad, cover_all, dilate, groups):
    """Validate the arguments of convolution_2d; return (node, inputs)."""
    x, W = variable_module.as_variable(x), variable_module.as_variable(W)
    b = None if b is None else variable_module.as_variable(b)
    x, W, b = mixed_precision.cast_to_low_precision(x, W, b)
    node = _checked_node(x.array, W.array, None if b is None else b.array, stride, pad,
                         cover_all, dilate, groups)
    return node, (x, W) if b is None else (x, W, b)


def _checked_node(x, W, b, stride, pad, cover_all, dilate, groups):
    """The node of convolution_2d for the arrays x, W and b, after checking them."""
    # NOTE: on the arrays, not the Variables: each property of a Variable read here is
    # one more Python call, for every convolution of every step.
    im2col.check_image_and_weight('convolution_2d', x, W, b)
    stride = im2col.as_pair(stride, 'convolution_2d: stride', 1)
    pad = im2col.as_pair(pad, 'convolution_2d: pad', 0)
    dilate = im2col.as_pair(dilate, 'convolution_2d: dilate', 1)
    groups = im2col.as_pair(groups, 'convolution_2d: groups', 1)[0]
    x_shape, w_shape = x.shape, W.shape
    if w_shape[0] % groups:
        raise ValueError(f'convolution_2d: the output channels W.shape[0] must be a multiple '
                         f'of groups={groups}, got W.shape={w_shape}')
    if x_shape[1] != w_shape[1] * groups:
        raise ValueError(
            f'convolution_2d: in_channels x.shape[1] must equal W.shape[1] * groups = '
            f'{w_shape[1]} * {groups}, got x.shape={x_shape}, W.shape={w_shape}')
    im2col.check_bias('convolution_2d', b, w_shape[0])
    out_size = (im2col.get_conv_outsize(x_shape[2], w_shape[2], stride[0], pad[0], cover_all,
                                        dilate[0]),
                im2col.get_conv_outsize(x_shape[3], w_shape[3], stride[1], pad[1], cover_all,
                                        dilate[1]))
    if min(out_size) < 1:
        raise ValueError(
            f'convolution_2d: the output size {out_size} is empty; the input x.shape='
            f'{x_shape} is too small for W.shape={w_shape} with stride='
            f'{stride}, pad={pad}, dilate={dilate}')
    return Convolution2D(stride, pad, dilate, groups, out_size)
