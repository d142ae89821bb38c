"""dilated_convolution_2d: convolution_2d with dilated kernels (Chainer API compatibility)."""

from cvzoo.core.functions.connection import convolution_2d as convolution_2d_module


def dilated_convolution_2d(x, W, b=None, stride=1, pad=0, dilate=1, cover_all=False):
    """Two-dimensional dilated convolution: ``convolution_2d(..., dilate=dilate)``.

    Kept for Chainer's argument order; see convolution_2d for the definition, the output
    size rule and the errors. Double backprop is supported.

    Args:
        x (Variable or array): (N, C, H, W) float images.
        W (Variable or array): (O, C, kh, kw) filters, of x's dtype.
        b (Variable, array or None): (O,) bias.
        stride (int or pair of int): (sy, sx), >= 1.
        pad (int or pair of int): (ph, pw), >= 0.
        dilate (int or pair of int): (dy, dx) spacing of the kernel taps, >= 1.
        cover_all (bool): round the output size up.

    Returns:
        Variable: (N, O, out_h, out_w) of x's dtype.

    >>> import numpy as np
    >>> x = np.ones((1, 1, 7, 7), np.float32)
    >>> dilated_convolution_2d(x, np.ones((1, 1, 3, 3), np.float32), dilate=2).shape
    (1, 1, 3, 3)
    """
    return convolution_2d_module.convolution_2d(
        x, W, b, stride, pad, cover_all, dilate=dilate)
