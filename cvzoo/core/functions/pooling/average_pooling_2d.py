"""average_pooling_2d: the mean of each window."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.cudnn import pooling as cudnn_pooling
from cvzoo.core.functions.pooling import unpooling_2d, window_2d


def _window_scale(xp, window, insize, outsize, pad_value, dtype):
    """1 / divisor of each window: a float, or an (out_H, out_W) array for pad_value=None."""
    if pad_value is not None:
        return 1.0 / window.n_offset
    ones = xp.ones((1, 1) + tuple(insize), dtype=dtype)
    counts = window.sum_windows(xp, window.make_canvas(xp, ones, outsize, 0), outsize)
    return (1 / counts[0, 0]).astype(dtype)


class AveragePooling2D(function_node.FunctionNode):
    def __init__(self, window, pad_value):
        self.window = window
        self.pad_value = pad_value

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.insize = x.shape[2:]
        y = cudnn_pooling.average_pool(x, self.window, self.pad_value)  # None off cuDNN
        if y is not None:
            return y,
        outsize = self.window.outsize(self.insize)
        canvas = self.window.make_canvas(xp, x, outsize, 0)
        scale = _window_scale(xp, self.window, self.insize, outsize, self.pad_value, x.dtype)
        y = self.window.sum_windows(xp, canvas, outsize)
        y *= scale
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        scale = _window_scale(gy.xp, self.window, self.insize, gy.shape[2:], self.pad_value,
                              gy.dtype)
        if not isinstance(scale, float):
            scale = variable_module.Variable(scale, requires_grad=False)
        return unpooling_2d.Unpooling2D(self.window, self.insize).apply((gy * scale,))


def average_pooling_2d(x, ksize, stride=None, pad=0, pad_value=0):
    """Spatial average pooling: the mean of each window.

    With ``pad_value=0`` (Chainer's default) each window's sum is divided by kh * kw,
    padded cells counting as zeros (torch's count_include_pad=True). With
    ``pad_value=None`` it is divided by the number of cells inside the input (torch's
    count_include_pad=False). Windows never hang over the edge (no cover_all). Global
    average pooling is ``ksize = (H, W)``, or ``global_average_pooling_2d``. Supports
    double backprop.

    Args:
        x (Variable or array): (N, C, H, W) float.
        ksize (int or pair of int): window size (kh, kw).
        stride (int, pair of int or None): step; None means ksize.
        pad (int or pair of int): zero padding on each side.
        pad_value (0 or None): how padded cells count, see above.

    Returns:
        Variable: (N, C, out_H, out_W), out_H = floor((H + 2 py - kh) / sy) + 1, the dtype
        of x.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> average_pooling_2d(x, 2).array[0, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]], dtype=float32)
    """
    if x.ndim != 4:
        raise ValueError(f'average_pooling_2d: x must be (N, C, H, W), got shape {x.shape}')
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'average_pooling_2d: x must be floating point, got {x.dtype}')
    if pad_value is not None and (isinstance(pad_value, bool) or pad_value != 0):
        raise ValueError(f'average_pooling_2d: pad_value must be 0 or None, got {pad_value!r}')
    window = window_2d.Window2D(ksize, ksize if stride is None else stride, pad, False)
    window.check_sizes(x.shape[2:], window.outsize(x.shape[2:]), 'average_pooling_2d')
    return AveragePooling2D(window, pad_value).apply((x,))[0]
