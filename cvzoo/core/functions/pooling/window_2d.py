"""Window2D: the geometry of a 2-D sliding window, shared by the pooling functions.

A window of ``ksize`` slides over an input of ``(H, W)`` padded by ``pad`` on each side,
moving by ``stride``. The pooling functions work on a padded copy of the input, the
*canvas*, and visit the windows one kernel offset at a time: for an offset ``(ky, kx)``
the cells of every window form one strided slice of the canvas. A loop over kernel
offsets (a handful) replaces a loop over pixels.

>>> window = Window2D(3, 2, 1, cover_all=False)
>>> window.outsize((112, 112))
(56, 56)
"""

import numbers


def pair(value, what):
    """Return ``value`` (an int or a pair of ints) as a tuple of two ints.

    Raises:
        TypeError: when ``value`` is neither; the message names ``what``.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value), int(value)
    if (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                    for v in value)):
        return int(value[0]), int(value[1])
    raise TypeError(f'{what}: expected an int or a pair of ints, got {value!r}')


def get_conv_outsize(size, k, s, p, cover_all=False):
    """Number of window positions along one axis of length ``size``.

    With ``cover_all`` the last window may hang over the end, so every cell is covered.
    """
    if cover_all:
        return (size + p * 2 - k + s - 1) // s + 1
    return (size + p * 2 - k) // s + 1


def get_deconv_outsize(size, k, s, p, cover_all=False):
    """The input length whose windows give ``size`` positions (inverse of the above)."""
    if cover_all:
        return s * (size - 1) + k - s + 1 - 2 * p
    return s * (size - 1) + k - 2 * p


class Window2D:
    """Geometry of a 2-D sliding window: ksize, stride, pad and cover_all.

    Args:
        ksize (int or pair of int): window size ``(kh, kw)``.
        stride (int or pair of int): step ``(sy, sx)``.
        pad (int or pair of int): padding on each side ``(py, px)``.
        cover_all (bool): let the last window hang over the end (Chainer's rule).
    """

    def __init__(self, ksize, stride, pad, cover_all):
        self.ksize = pair(ksize, 'ksize')
        self.stride = pair(stride, 'stride')
        self.pad = pair(pad, 'pad')
        self.cover_all = bool(cover_all)
        if min(self.ksize) < 1 or min(self.stride) < 1 or min(self.pad) < 0:
            raise ValueError(
                f'ksize and stride must be positive and pad non-negative, got ksize='
                f'{self.ksize}, stride={self.stride}, pad={self.pad}')

    @property
    def n_offset(self):
        """Cells per window, kh * kw."""
        return self.ksize[0] * self.ksize[1]

    def outsize(self, insize):
        """Window positions ``(out_H, out_W)`` over an input of ``insize`` = (H, W)."""
        return tuple(get_conv_outsize(n, k, s, p, self.cover_all)
                     for n, k, s, p in zip(insize, self.ksize, self.stride, self.pad))

    def insize(self, outsize):
        """The default input size whose window positions are ``outsize``."""
        return tuple(get_deconv_outsize(n, k, s, p, self.cover_all)
                     for n, k, s, p in zip(outsize, self.ksize, self.stride, self.pad))

    def check_sizes(self, insize, outsize, what):
        """Raise ValueError unless the windows over ``insize`` are ``outsize``, nonempty."""
        expected = self.outsize(insize)
        if tuple(outsize) != expected or min(expected) < 1:
            raise ValueError(
                f'{what}: windows of ksize={self.ksize}, stride={self.stride}, pad='
                f'{self.pad}, cover_all={self.cover_all} over an input of {tuple(insize)} '
                f'give {expected} positions, but {tuple(outsize)} were expected (all >= 1)')

    def canvas_size(self, insize, outsize):
        """Size of the padded canvas: the input plus padding plus any overhang."""
        return tuple(max(n + 2 * p, (o - 1) * s + k) for n, o, k, s, p in zip(
            insize, outsize, self.ksize, self.stride, self.pad))

    def offsets(self):
        """Yield ``(k, ky, kx)`` for each kernel offset, row-major: k = ky * kw + kx."""
        kh, kw = self.ksize
        for ky in range(kh):
            for kx in range(kw):
                yield ky * kw + kx, ky, kx

    # NOTE: the cells at one kernel offset are a strided slice of the canvas. Strided
    # slices defeat SIMD loops and caches, so for stride > 1 the canvas is split once into
    # its stride phases (rows a::sy, columns b::sx), each a contiguous array; the cells at
    # offset (ky, kx) are then a unit-stride window of phase (ky % sy, kx % sx). This
    # makes ResNet's 3x3/2 max pooling about twice as fast.

    def _phase_keys(self):
        (kh, kw), (sy, sx) = self.ksize, self.stride
        return [(a, b) for a in range(min(sy, kh)) for b in range(min(sx, kw))]

    def split(self, xp, canvas):
        """The stride phases of a canvas, as contiguous arrays keyed by (a, b)."""
        if self.stride == (1, 1):
            return {(0, 0): canvas}
        sy, sx = self.stride
        return {(a, b): xp.ascontiguousarray(canvas[:, :, a::sy, b::sx])
                for a, b in self._phase_keys()}

    def zero_phases(self, xp, lead_shape, canvas_size, dtype):
        """Zero stride phases of a canvas of ``canvas_size``, to scatter into."""
        (sy, sx), (hc, wc) = self.stride, canvas_size
        return {(a, b): xp.zeros(tuple(lead_shape) + (-((a - hc) // sy), -((b - wc) // sx)),
                                 dtype=dtype)
                for a, b in self._phase_keys()}

    def merge(self, xp, phases, canvas_size):
        """Interleave stride phases back into a canvas (cells of no phase are zero)."""
        if self.stride == (1, 1):
            return phases[0, 0]
        sy, sx = self.stride
        first = phases[0, 0]
        canvas = xp.zeros(first.shape[:2] + tuple(canvas_size), dtype=first.dtype)
        for (a, b), phase in phases.items():
            canvas[:, :, a::sy, b::sx] = phase
        return canvas

    def cells(self, phases, ky, kx, outsize):
        """The cell at offset (ky, kx) of every window: a view of one phase."""
        (sy, sx), (oh, ow) = self.stride, outsize
        y0, x0 = ky // sy, kx // sx
        return phases[ky % sy, kx % sx][:, :, y0:y0 + oh, x0:x0 + ow]

    def make_canvas(self, xp, x, outsize, value):
        """Return a padded copy of ``x`` (N, C, H, W), cells outside x set to ``value``."""
        insize = x.shape[2:]
        py, px = self.pad
        canvas = xp.full(x.shape[:2] + self.canvas_size(insize, outsize), value, dtype=x.dtype)
        canvas[:, :, py:py + insize[0], px:px + insize[1]] = x
        return canvas

    def crop(self, canvas, insize):
        """The part of a canvas that lies on the input (a view)."""
        py, px = self.pad
        return canvas[:, :, py:py + insize[0], px:px + insize[1]]

    def sum_windows(self, xp, canvas, outsize):
        """Sum each window of ``canvas``; (N, C, out_H, out_W)."""
        phases = self.split(xp, canvas)
        y = None
        for _, ky, kx in self.offsets():
            if y is None:
                y = self.cells(phases, ky, kx, outsize).copy()
            else:
                y += self.cells(phases, ky, kx, outsize)
        return y

    def spread_windows(self, xp, y, canvas_size):
        """Add each value of ``y`` to every cell of its window on a zero canvas."""
        phases = self.zero_phases(xp, y.shape[:2], canvas_size, y.dtype)
        for _, ky, kx in self.offsets():
            self.cells(phases, ky, kx, y.shape[2:])[...] += y
        return self.merge(xp, phases, canvas_size)
