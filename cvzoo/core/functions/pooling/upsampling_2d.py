"""upsampling_2d: put each value at the position max pooling took it from (SegNet)."""

import numpy

from cvzoo.core import backend, function_node, parallel
from cvzoo.core.functions.pooling import window_2d


class Upsampling2D(function_node.FunctionNode):
    """Scatter each value to the cell of its window named by ``indexes``.

    This is also max pooling's gradient node; its own gradient gathers with the same
    indexes (``_Upsampling2DGrad``), whose gradient is this scatter again.
    """

    def __init__(self, indexes, window, outsize):
        self.indexes = indexes
        self.window = window
        self.outsize = tuple(outsize)

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        if xp is not numpy:
            return self._scatter(x, self.indexes)
        # windows never cross channels: slices of channels go to several threads
        y = numpy.empty(x.shape[:2] + self.outsize, dtype=x.dtype)
        parallel.by_slices(self._scatter, (y,), (x, self.indexes), axis=1)
        return y,

    def _scatter(self, x, indexes):
        """(y,): x scattered to the cells named by indexes."""
        xp = backend.get_array_module(x)
        canvas_size = self.window.canvas_size(self.outsize, x.shape[2:])
        phases = self.window.zero_phases(xp, x.shape[:2], canvas_size, x.dtype)
        for k, ky, kx in self.window.offsets():
            # NOTE: multiplying by the mask is much faster than where() or a masked add.
            self.window.cells(phases, ky, kx, x.shape[2:])[...] += x * (indexes == k)
        canvas = self.window.merge(xp, phases, canvas_size)
        return self.window.crop(canvas, self.outsize),

    def backward(self, indexes, grad_outputs):
        pooled_size = self.indexes.shape[2:]
        node = _Upsampling2DGrad(self.indexes, self.window, pooled_size)
        return node.apply(grad_outputs)


class _Upsampling2DGrad(function_node.FunctionNode):
    """Gather, from each window, the cell named by ``indexes`` (the adjoint scatter)."""

    def __init__(self, indexes, window, pooled_size):
        self.indexes = indexes
        self.window = window
        self.pooled_size = tuple(pooled_size)

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        self.insize = gy.shape[2:]
        canvas = self.window.make_canvas(xp, gy, self.pooled_size, 0)
        phases = self.window.split(xp, canvas)
        gx = xp.zeros(gy.shape[:2] + self.pooled_size, dtype=gy.dtype)
        for k, ky, kx in self.window.offsets():
            gx += self.window.cells(phases, ky, kx, self.pooled_size) * (self.indexes == k)
        return gx,

    def backward(self, indexes, grad_outputs):
        node = Upsampling2D(self.indexes, self.window, self.insize)
        return node.apply(grad_outputs)


def _check_indexes(x, indexes, window):
    if getattr(indexes, 'shape', None) != x.shape:
        raise ValueError(
            f'upsampling_2d: indexes must have the shape of x, {x.shape}, got '
            f'{getattr(indexes, "shape", type(indexes).__name__)}')
    if numpy.dtype(indexes.dtype).kind not in 'iu':
        raise TypeError(f'upsampling_2d: indexes must be integers, got {indexes.dtype}')
    if backend.get_array_module(indexes) is not numpy:
        return  # indexes on a GPU come from max pooling; a range check would sync
    if indexes.size and (int(indexes.min()) < 0 or int(indexes.max()) >= window.n_offset):
        raise ValueError(
            f'upsampling_2d: indexes must lie in [0, {window.n_offset}) (kh * kw), got '
            f'values in [{int(indexes.min())}, {int(indexes.max())}]')


def upsampling_2d(x, indexes, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """Upsample by putting each value where max pooling found it; zeros elsewhere.

    The decoder op of SegNet: ``indexes`` come from
    ``max_pooling_2d(..., return_indices=True)`` with the same ksize, stride, pad and
    cover_all. Where windows overlap, values landing on the same cell are summed.
    Supports double backprop.

    Args:
        x (Variable or array): (N, C, h, w) float, the pooled values.
        indexes (array): (N, C, h, w) int, the cell of each window, ``ky * kw + kx``.
        ksize (int or pair of int): window size of the pooling.
        stride (int, pair of int or None): its stride; None means ksize.
        pad (int or pair of int): its padding.
        outsize (pair of int or None): (H, W) of the output; None computes it from the
            pooling's geometry (the smallest input that pools to (h, w)).
        cover_all (bool): the pooling's cover_all.

    Returns:
        Variable: (N, C, H, W), the dtype of x.

    >>> import numpy as np
    >>> import cvzoo.core.functions as F
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> y, indexes = F.max_pooling_2d(x, 2, return_indices=True)
    >>> F.upsampling_2d(y, indexes, 2, outsize=(4, 4)).array[0, 0]
    array([[ 0.,  0.,  0.,  0.],
           [ 0.,  5.,  0.,  7.],
           [ 0.,  0.,  0.,  0.],
           [ 0., 13.,  0., 15.]], dtype=float32)
    """
    if x.ndim != 4:
        raise ValueError(f'upsampling_2d: x must be (N, C, h, w), got shape {x.shape}')
    window = window_2d.Window2D(ksize, ksize if stride is None else stride, pad, cover_all)
    _check_indexes(x, indexes, window)
    # indexes given on the host go to x's device once, explicitly
    indexes = backend.on_device_of(indexes, x, dtype=indexes.dtype)
    outsize = window.insize(x.shape[2:]) if outsize is None else window_2d.pair(
        outsize, 'outsize')
    window.check_sizes(outsize, x.shape[2:], 'upsampling_2d')
    return Upsampling2D(indexes, window, outsize).apply((x,))[0]
