"""depthwise_convolution_2d: one filter bank per input channel (Chainer API compatibility)."""

from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import reshape as reshape_module
from cvzoo.core.functions.array import transpose as transpose_module
from cvzoo.core.functions.connection import convolution_2d as convolution_2d_module


def depthwise_convolution_2d(x, W, b=None, stride=1, pad=0):
    """Two-dimensional depthwise convolution, in Chainer's weight layout.

    Each input channel c is convolved with its own ``multiplier`` filters ``W[:, c]``;
    output channel ``c * multiplier + m`` holds filter m of channel c. It is
    convolution_2d with ``groups = C`` and W rearranged to (C * multiplier, 1, kh, kw).
    Double backprop is supported.

    Args:
        x (Variable or array): (N, C, H, W) float images.
        W (Variable or array): (multiplier, C, kh, kw) filters, of x's dtype.
        b (Variable, array or None): (C * multiplier,) bias.
        stride (int or pair of int): (sy, sx), >= 1.
        pad (int or pair of int): (ph, pw), >= 0.

    Returns:
        Variable: (N, C * multiplier, out_h, out_w) of x's dtype.

    Raises:
        ValueError: W not 4-D or W.shape[1] != C (the in_channels); see convolution_2d.

    >>> import numpy as np
    >>> x = np.ones((1, 3, 5, 5), np.float32)
    >>> depthwise_convolution_2d(x, np.ones((2, 3, 3, 3), np.float32), pad=1).shape
    (1, 6, 5, 5)
    """
    x, W = variable_module.as_variable(x), variable_module.as_variable(W)
    if W.ndim != 4 or x.ndim != 4 or W.shape[1] != x.shape[1]:
        raise ValueError(
            'depthwise_convolution_2d: expected x (N, C, H, W) and W (multiplier, C, kh, kw)'
            f' with the same in_channels C, got x.shape={tuple(x.shape)}, '
            f'W.shape={tuple(W.shape)}')
    multiplier, channels, kh, kw = W.shape
    W = transpose_module.transpose(W, (1, 0, 2, 3))
    W = reshape_module.reshape(W, (channels * multiplier, 1, kh, kw))
    return convolution_2d_module.convolution_2d(x, W, b, stride, pad, groups=channels)
