"""heatmaps_to_points: the point of each keypoint heatmap of a RoI, by torchvision's rule
(``heatmaps_to_keypoints`` of its Keypoint R-CNN).

A RoI of width w and height h (in pixels, each at least 1) has its (K, S, S) heatmaps
resized to ``(ceil(h), ceil(w))`` by bicubic interpolation (torch's
``interpolate(mode='bicubic', align_corners=False)``: cubic convolution with a = -0.75,
source position ``(i + 0.5) * S / size - 0.5``, taps clamped at the border). Each
heatmap's point is the first maximum of its resized map, at the centre of that pixel:
``x = x_min + (column + 0.5) * w / ceil(w)`` (Heckbert's d + 0.5, as torchvision), and
its score is the maximum.

The RoIs have different sizes; rather than one interpolation per RoI (torchvision's
loop), the maps of a group of RoIs are resized together, each on its own grid padded to
the group's largest, the padding set to -inf so that it never wins. Groups are cut, in
order of decreasing height, so that a group holds at most ``max_elements`` values
(a RoI the size of the whole image is a group of its own): the Python loop runs over
groups, one for a typical image (e.g. 100 RoIs of 150 x 100 pixels at K = 17).
The resize is separable: the columns first, then the rows, each value summed in torch's
order (the four column taps of each of the four row taps, then the rows) with its tap
weights (the far tap beyond x is evaluated at ``(1 - t) + 1``, as torch does). torch's
compiled kernel fuses multiply-adds, so the resized values differ from its own by a few
float32 ulps (about 1e-6 of the values' range); a point moves only where two pixels of a
map tie that closely.
"""

import numpy

from cvzoo.core import backend
from cvzoo.models.detection import detector

# NOTE: torch's cubic convolution constant (Keys 1981 with a = -0.75, as OpenCV)
CUBIC_A = -0.75
MAX_ELEMENTS = 2 ** 24


def cubic_taps(n_out, size, scale):
    """Taps and weights of torch's bicubic resize (align_corners=False) along one axis.

    Args:
        n_out (int): output positions computed (a group's padded size).
        size (array): (R,) int, each RoI's output size (> 0).
        scale (int): the input size (the heatmap's side S).

    Returns:
        tuple: ``index`` (R, n_out, 4) int input positions (clamped to [0, scale - 1])
        and ``weight`` (R, n_out, 4) float32; positions past a RoI's size get any taps.
    """
    xp = backend.get_array_module(size)
    f32 = numpy.float32
    ratio = (f32(scale) / size.astype(f32))[:, None]
    src = ratio * (xp.arange(n_out, dtype=f32) + f32(0.5))[None] - f32(0.5)
    start = xp.minimum(xp.floor(src), scale - 1)
    t = xp.clip(src - start, f32(0), f32(1))
    a = f32(CUBIC_A)

    def far(x):  # the outer taps, |x| in [1, 2]
        return ((a * x - f32(5) * a) * x + f32(8) * a) * x - f32(4) * a

    def near(x):  # the inner taps, |x| in [0, 1]
        return ((a + f32(2)) * x - (a + f32(3))) * x * x + f32(1)

    rest = f32(1) - t  # NOTE: torch's far tap is far(rest + 1), which rounds unlike 2 - t
    weight = xp.stack((far(t + f32(1)), near(t), near(rest), far(rest + f32(1))), axis=-1)
    index = start.astype(numpy.int64)[..., None] + xp.arange(-1, 3)
    return xp.clip(index, 0, scale - 1), weight.astype(f32)


def _resize_group(heatmap, height, width, H, W):
    """(n, K, S, S) maps -> (n, K, H, W), each resized to its (height, width) and padded
    with -inf."""
    xp = backend.get_array_module(heatmap)
    n, K, S, _ = heatmap.shape
    x_index, x_weight = cubic_taps(W, width, S)
    y_index, y_weight = cubic_taps(H, height, S)
    columns = None
    for b in range(4):  # the column taps, summed in torch's order
        taps = xp.take_along_axis(heatmap, x_index[:, None, None, :, b], axis=3)
        term = taps * x_weight[:, None, None, :, b]
        columns = term if columns is None else columns + term
    resized = None
    for b in range(4):  # then the row taps
        taps = xp.take_along_axis(columns, y_index[:, None, :, None, b], axis=2)
        term = taps * y_weight[:, None, :, None, b]
        resized = term if resized is None else resized + term
    outside = (xp.arange(H)[None, :, None] >= height[:, None, None]) | \
        (xp.arange(W)[None, None, :] >= width[:, None, None])
    return xp.where(outside[:, None], -numpy.inf, resized)


def _groups(height, width, n_point, max_elements):
    """Cut RoIs sorted by decreasing height into consecutive groups of at most
    ``max_elements`` padded values (one RoI at least): a list of (start, stop)."""
    groups, start = [], 0
    while start < len(height):  # NOTE: one pass per group, vectorised over its RoIs
        n = numpy.arange(1, len(height) - start + 1)
        cost = n * n_point * height[start] * numpy.maximum.accumulate(width[start:])
        stop = start + max(int((cost <= max_elements).sum()), 1)
        groups.append((start, stop))
        start = stop
    return groups


def heatmaps_to_points(heatmap, roi, *, max_elements=MAX_ELEMENTS):
    """Points and scores of RoIs' keypoint heatmaps; see the module docstring.

    Args:
        heatmap (array): (R, K, S, S) float32 heatmap logits.
        roi (array): (R, 4) float32 boxes (x_min, y_min, x_max, y_max) in pixels, on the
            heatmap's device.
        max_elements (int): values of resized maps computed at once (memory bound).

    Returns:
        tuple: ``point`` (R, K, 2) float32 (x, y) in the boxes' pixels and
        ``point_score`` (R, K) float32 (the resized heatmap's maximum), on the device.

    Raises:
        ValueError: shapes that do not fit (named).

    >>> heatmap = numpy.zeros((1, 1, 4, 4), numpy.float32)
    >>> heatmap[0, 0, 1, 2] = 1
    >>> point, score = heatmaps_to_points(heatmap, numpy.array([[10, 20, 18, 28]], numpy.float32))
    >>> point.tolist(), round(float(score[0, 0]), 3)
    ([[[14.5, 22.5]]], 0.772)
    """
    if heatmap.ndim != 4 or heatmap.shape[2] != heatmap.shape[3]:
        raise ValueError(f'heatmap: expected (R, K, S, S), got shape {heatmap.shape}')
    if roi.shape != (len(heatmap), 4):
        raise ValueError(f'roi: expected ({len(heatmap)}, 4) (one box per heatmap), got '
                         f'shape {roi.shape}')
    xp = backend.get_array_module(heatmap)
    R, K = heatmap.shape[:2]
    f32 = numpy.float32
    roi = roi.astype(f32, copy=False)
    size = xp.maximum(roi[:, 2:] - roi[:, :2], f32(1))  # (w, h)
    grid = xp.ceil(size)
    point, point_score = xp.zeros((R, K, 2), f32), xp.zeros((R, K), f32)
    (grid_host,) = detector.to_host(grid.astype(numpy.int64))
    order = numpy.argsort(-grid_host[:, 1], kind='stable')
    height, width = grid_host[order, 1], grid_host[order, 0]
    for start, stop in _groups(height, width, K, max_elements):
        members = xp.asarray(order[start:stop])
        H, W = int(height[start]), int(width[start:stop].max())
        resized = _resize_group(heatmap[members].astype(f32, copy=False),
                                grid[members, 1].astype(numpy.int64),
                                grid[members, 0].astype(numpy.int64), H, W)
        flat = resized.reshape(len(members), K, H * W)
        best = xp.argmax(flat, axis=2)
        point_score[members] = xp.take_along_axis(flat, best[..., None], axis=2)[..., 0]
        column, row = best % W, best // W
        cell = (xp.stack((column, row), axis=-1).astype(f32) + f32(0.5))
        correction = (size[members] / grid[members])[:, None, :]
        point[members] = cell * correction + roi[members, None, :2]
    return point, point_score
