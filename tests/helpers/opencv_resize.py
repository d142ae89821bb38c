"""OpenCV's bilinear resize written out one output cell at a time: a test reference."""

import math

import numpy


def taps(n_in, n_out):
    """OpenCV's bilinear taps (first, second, weight of second) of each output cell."""
    taps = []
    for d in range(n_out):
        s = (d + 0.5) * n_in / n_out - 0.5
        first = math.floor(s)
        frac = s - first
        if first < 0:
            first, frac = 0, 0.0
        if first >= n_in - 1:
            first, frac = n_in - 1, 0.0
        taps.append((first, min(first + 1, n_in - 1), frac))
    return taps


def resize(a, out_h, out_w):
    """``a`` (H, W) resized to (out_h, out_w) with OpenCV's bilinear rule, float32."""
    out = numpy.zeros((out_h, out_w), numpy.float32)
    for y, (y0, y1, fy) in enumerate(taps(a.shape[0], out_h)):
        for x, (x0, x1, fx) in enumerate(taps(a.shape[1], out_w)):
            top = (1 - fx) * a[y0, x0] + fx * a[y0, x1]
            bottom = (1 - fx) * a[y1, x0] + fx * a[y1, x1]
            out[y, x] = (1 - fy) * top + fy * bottom
    return out
