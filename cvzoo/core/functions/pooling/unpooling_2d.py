"""unpooling_2d: copy each value into every cell of its window."""

from cvzoo.core import backend, function_node
from cvzoo.core.functions.pooling import window_2d


class Unpooling2D(function_node.FunctionNode):
    """Spread each value over its window; overlapping windows add up.

    Its gradient sums each window (``_Unpooling2DGrad``), whose gradient is this again.
    """

    def __init__(self, window, outsize):
        self.window = window
        self.outsize = tuple(outsize)

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.pooled_size = x.shape[2:]
        canvas_size = self.window.canvas_size(self.outsize, self.pooled_size)
        canvas = self.window.spread_windows(xp, x, canvas_size)
        return self.window.crop(canvas, self.outsize),

    def backward(self, indexes, grad_outputs):
        return _Unpooling2DGrad(self.window, self.pooled_size).apply(grad_outputs)


class _Unpooling2DGrad(function_node.FunctionNode):
    """Sum each window of the (zero-padded) input: the adjoint of the spread."""

    def __init__(self, window, pooled_size):
        self.window = window
        self.pooled_size = tuple(pooled_size)

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        self.insize = gy.shape[2:]
        canvas = self.window.make_canvas(xp, gy, self.pooled_size, 0)
        return self.window.sum_windows(xp, canvas, self.pooled_size),

    def backward(self, indexes, grad_outputs):
        return Unpooling2D(self.window, self.insize).apply(grad_outputs)


def unpooling_2d(x, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """Inverse of pooling in shape: copy each value into every cell of its window.

    With ``stride == ksize`` and ``cover_all=False`` this is nearest-neighbour
    upsampling by an integer factor. Where windows overlap the copies are summed, so
    the gradient sums each window. Supports double backprop.

    Args:
        x (Variable or array): (N, C, h, w) float.
        ksize (int or pair of int): window size (kh, kw).
        stride (int, pair of int or None): step; None means ksize.
        pad (int or pair of int): padding of the pooling this undoes; the padded cells
            are cut off the output.
        outsize (pair of int or None): (H, W) of the output; None means
            ``sy * (h - 1) + kh - 2 py`` (minus ``sy - 1`` with cover_all).
        cover_all (bool): the cover_all of the pooling this undoes.

    Returns:
        Variable: (N, C, H, W), the dtype of x.

    >>> import numpy as np
    >>> x = np.array([[[[1, 2]]]], dtype=np.float32)
    >>> unpooling_2d(x, 2, cover_all=False).array[0, 0]
    array([[1., 1., 2., 2.],
           [1., 1., 2., 2.]], dtype=float32)
    """
    if x.ndim != 4:
        raise ValueError(f'unpooling_2d: x must be (N, C, h, w), got shape {x.shape}')
    window = window_2d.Window2D(ksize, ksize if stride is None else stride, pad, cover_all)
    outsize = window.insize(x.shape[2:]) if outsize is None else window_2d.pair(
        outsize, 'outsize')
    window.check_sizes(outsize, x.shape[2:], 'unpooling_2d')
    return Unpooling2D(window, outsize).apply((x,))[0]
