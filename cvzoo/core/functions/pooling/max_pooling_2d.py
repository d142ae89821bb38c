"""max_pooling_2d: the largest value of each window."""

import numpy

from cvzoo.core import backend, config, function_node, parallel
from cvzoo.core.cudnn import pooling as cudnn_pooling
from cvzoo.core.functions.pooling import upsampling_2d, window_2d


class MaxPooling2D(function_node.FunctionNode):
    def __init__(self, window, keep_indexes=True):
        self.window = window
        # NOTE: inference without return_indices needs no winners: finding them is
        # three of the four passes per window cell.
        self.keep_indexes = keep_indexes
        self.indexes = None  # (N, C, out_H, out_W) int32, the winning cell of each window

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.insize = x.shape[2:]
        if xp is not numpy:
            y = None if self.keep_indexes else cudnn_pooling.max_pool(x, self.window)
            if y is not None:  # None off cuDNN; training needs the winners: CuPy
                return y,
            result = self._pool(x)
            self.indexes = result[1] if self.keep_indexes else None
            return result[0],
        # windows never cross channels: slices of channels go to several threads
        outsize = self.window.outsize(self.insize)
        y = numpy.empty(x.shape[:2] + outsize, dtype=x.dtype)
        if self.keep_indexes:
            self.indexes = numpy.empty(y.shape, dtype=numpy.int32)
            parallel.by_slices(self._pool, (y, self.indexes), (x,), axis=1)
        else:
            parallel.by_slices(self._pool, (y,), (x,), axis=1)
        return y,

    def _pool(self, x):
        """(y, indexes) of the windows of x."""
        xp = backend.get_array_module(x)
        outsize = self.window.outsize(self.insize)
        # NOTE: padding with -inf means a padded cell never wins a window.
        canvas = self.window.make_canvas(xp, x, outsize, -numpy.inf)
        phases = self.window.split(xp, canvas)
        del canvas
        y = None
        indexes = xp.zeros(x.shape[:2] + outsize, dtype=numpy.int32) if self.keep_indexes else None
        for k, ky, kx in self.window.offsets():
            cells = self.window.cells(phases, ky, kx, outsize)
            if y is None:
                y = cells.copy()
                continue
            if indexes is None:
                xp.maximum(y, cells, out=y)
                continue
            # NOTE: a strict '>' keeps the first maximum on ties, as Chainer and torch do.
            # indexes = where(wins, k, indexes), written as arithmetic: masked writes
            # with a random mask are several times slower.
            wins = cells > y
            xp.maximum(y, cells, out=y)
            step = k - indexes
            step *= wins
            indexes += step
        return (y, indexes) if indexes is not None else (y,)

    def backward(self, indexes, grad_outputs):
        node = upsampling_2d.Upsampling2D(self.indexes, self.window, self.insize)
        return node.apply(grad_outputs)


def max_pooling_2d(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """Spatial max pooling: the largest value of each window.

    Padded cells never win. The gradient goes to the winning cell of each window (the
    first one on ties); it supports double backprop (the second-order gradient gathers
    from the same cells).

    Args:
        x (Variable or array): (N, C, H, W) float.
        ksize (int or pair of int): window size (kh, kw).
        stride (int, pair of int or None): step; None means ksize.
        pad (int or pair of int): padding on each side.
        cover_all (bool): when True (Chainer's default) the last window may hang over the
            bottom/right edge so every cell is covered; out_H = ceil((H + 2 py - kh) / sy)
            + 1. When False, out_H = floor((H + 2 py - kh) / sy) + 1, as in torch.
        return_indices (bool): also return the winning cell of each window, for
            ``upsampling_2d``.

    Returns:
        Variable: (N, C, out_H, out_W), the dtype of x; with ``return_indices`` a tuple
        ``(y, indexes)``, indexes an (N, C, out_H, out_W) int32 array of ``ky * kw + kx``.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> max_pooling_2d(x, 2).array[0, 0]
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """
    if x.ndim != 4:
        raise ValueError(f'max_pooling_2d: x must be (N, C, H, W), got shape {x.shape}')
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'max_pooling_2d: x must be floating point, got {x.dtype}')
    window = window_2d.Window2D(ksize, ksize if stride is None else stride, pad, cover_all)
    outsize = window.outsize(x.shape[2:])
    window.check_sizes(x.shape[2:], outsize, 'max_pooling_2d')
    node = MaxPooling2D(window, keep_indexes=return_indices or config.config.enable_backprop)
    y = node.apply((x,))[0]
    if return_indices:
        return y, node.indexes
    return y
