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
the group's largest, in two passes:

1. every map is resized along x (the column pass), and each output row gets an upper
   bound of its values from its four row taps and the extreme values of their columns;
   the ``n_row`` rows of highest bound (plus four per heatmap row: the output rows
   around a peak bound alike) are resized exactly and searched. When the maximum found
   beats every other row's bound (by a margin for float32 rounding) it is the map's;
2. the other maps (flat or many-peaked ones: rare for a trained model's heatmaps,
   common for random weights) are resized whole, each on its own.

Groups hold at most ``max_elements`` values (a RoI the size of the whole image is a group
of its own): the Python loops run over groups, one or a few for a typical image.
Measured on one core (OPENBLAS_NUM_THREADS=1, 2-core machine, 17 points of 56 x 56,
median of 3), against torch's per-RoI loop of ``interpolate`` and ``argmax``: 100
RoIs of 30 ... 300 pixels with peaked heatmaps 0.64 s (torch 0.26 s), with random ones
0.95 s (0.25 s); 100 RoIs of 300 ... 800 pixels with random heatmaps 7.2 s (3.2 s);
5 RoIs of 150 ... 400 pixels 0.08 s (0.03 s). The rows are resized in torch's order
(the four column taps of each of the four row taps, then the rows) with its tap weights
(the far tap beyond x is evaluated at ``(1 - t) + 1``, as torch does). torch's compiled
kernel fuses multiply-adds, so the resized values differ from its own by a few float32
ulps (about 1e-6 of the values' range); a point moves only where two pixels of a map tie
that closely.
"""

import numpy

from cvzoo.core import backend
from cvzoo.models.detection import detector

# NOTE: torch's cubic convolution constant (Keys 1981 with a = -0.75, as OpenCV)
CUBIC_A = -0.75
MAX_ELEMENTS = 2 ** 24
N_ROW = 8


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


def _columns(heatmap, width, W):
    """The column pass: (n, K, S, S) maps -> (n, K, S, W), each resized along x to its
    width (columns past it get any values)."""
    xp = backend.get_array_module(heatmap)
    n, K, S, _ = heatmap.shape
    x_index, x_weight = cubic_taps(W, width, S)
    # NOTE: one row per (RoI, input column) holding its K x S values, so that each tap is
    # a gather of whole rows
    table = heatmap.transpose(0, 3, 1, 2).reshape(n * S, K * S)
    x_index = x_index + (xp.arange(n) * S)[:, None, None]
    columns = None
    for b in range(4):  # the column taps, summed in torch's order
        term = table[x_index[..., b]] * x_weight[..., b, None]
        columns = term if columns is None else columns + term
    return xp.ascontiguousarray(columns.reshape(n, W, K, S).transpose(0, 2, 3, 1))


def _rows(columns, y_index, y_weight):
    """The row pass of chosen output rows: (n, K, S, W) columns and (n, K or 1, T, 4) taps
    -> (n, K, T, W)."""
    xp = backend.get_array_module(columns)
    n, K, S, W = columns.shape
    table = columns.reshape(n * K * S, W)
    start = (xp.arange(n)[:, None] * K + xp.arange(K)[None, :]) * S
    y_index = y_index + start[:, :, None, None]
    rows = None
    for a in range(4):  # the row taps, summed in torch's order
        term = table[y_index[..., a]] * y_weight[..., a, None]
        rows = term if rows is None else rows + term
    return rows


def _mask(values, row, width, height):
    """``values`` (n, K, T, W) of output rows ``row`` (n, K or 1, T) with -inf past each
    RoI's width and height."""
    xp = backend.get_array_module(values)
    outside = (xp.arange(values.shape[3]) >= width[:, None, None, None]) | \
        (row >= height[:, None, None])[..., None]
    return xp.where(outside, -numpy.inf, values)


def _resize_group(heatmap, height, width, H, W):
    """(n, K, S, S) maps -> (n, K, H, W), each resized to its (height, width) and padded
    with -inf."""
    xp = backend.get_array_module(heatmap)
    y_index, y_weight = cubic_taps(H, height, heatmap.shape[2])
    resized = _rows(_columns(heatmap, width, W), y_index[:, None], y_weight[:, None])
    return _mask(resized, xp.arange(H)[None, None], width, height)


def _first_maximum(values, row):
    """First maximum in row-major order of (n, K, T, W) values on output rows ``row``
    (n, K, T), increasing: (value, row, column), each (n, K)."""
    xp = backend.get_array_module(values)
    n, K, T, W = values.shape
    flat = values.reshape(n, K, T * W)
    best = xp.argmax(flat, axis=2)[..., None]
    value = xp.take_along_axis(flat, best, axis=2)[..., 0]
    return value, xp.take_along_axis(row, best // W, axis=2)[..., 0], (best % W)[..., 0]


def _search_group(heatmap, height, width, size, n_row):
    """The maxima of resized maps from their ``n_row`` most promising rows.

    Each output row's values are bounded from above by its four row taps and the extreme
    values of their columns; the ``n_row`` rows of highest bound are resized exactly. The
    maximum found is the whole map's when it beats every other row's bound (by a margin
    that covers float32 rounding); ``exact`` says so.

    Args:
        heatmap (array): (n, K, S, S) maps.
        height, width (array): (n,) int, each RoI's resized size.
        size (pair of int): (H, W), the largest height and width.
        n_row (int): rows resized exactly besides four per input row.

    Returns:
        tuple of (n, K) arrays: value, row, column and exact (bool).
    """
    xp = backend.get_array_module(heatmap)
    S, (H, W) = heatmap.shape[2], size
    columns = _columns(heatmap, width, W)
    valid = xp.arange(W) < width[:, None, None, None]
    high = xp.where(valid, columns, -numpy.inf).max(axis=3)
    low = xp.where(valid, columns, numpy.inf).min(axis=3)
    y_index, y_weight = cubic_taps(H, height, S)
    bound = None
    for a in range(4):
        index, weight = y_index[:, None, :, a], y_weight[:, None, :, a]
        term = xp.maximum(weight * xp.take_along_axis(high, index, axis=2),
                          weight * xp.take_along_axis(low, index, axis=2))
        bound = term if bound is None else bound + term
    bound = xp.where(xp.arange(H) < height[:, None, None], bound, -numpy.inf)
    # NOTE: the output rows of the four input rows around a peak bound alike
    n_row = min(n_row + 4 * -(-H // S), H)
    ranked = xp.argsort(-bound, axis=2)
    row = xp.sort(ranked[..., :n_row], axis=2)
    taps = (xp.take_along_axis(y_index[:, None], row[..., None], axis=2),
            xp.take_along_axis(y_weight[:, None], row[..., None], axis=2))
    value, best_row, column = _first_maximum(
        _mask(_rows(columns, *taps), row, width, height), row)
    if n_row == H:
        return value, best_row, column, xp.ones(value.shape, bool)
    rest = xp.take_along_axis(bound, ranked[..., n_row, None], axis=2)[..., 0]
    margin = numpy.float32(1e-5) * (xp.abs(value) + numpy.float32(1))
    return value, best_row, column, value > rest + margin


def _groups(lead, rest, n_point, max_elements):
    """Cut RoIs sorted by decreasing ``lead`` size into consecutive groups of at most
    ``max_elements`` padded values (``lead`` by ``rest`` per keypoint; one RoI at least):
    a list of (start, stop)."""
    groups, start = [], 0
    while start < len(lead):  # NOTE: one pass per group, vectorised over its RoIs
        n = numpy.arange(1, len(lead) - start + 1)
        cost = n * n_point * lead[start] * numpy.maximum.accumulate(rest[start:])
        stop = start + max(int((cost <= max_elements).sum()), 1)
        groups.append((start, stop))
        start = stop
    return groups


def heatmaps_to_points(heatmap, roi, *, max_elements=MAX_ELEMENTS, n_row=N_ROW):
    """Points and scores of RoIs' keypoint heatmaps; see the module docstring.

    Args:
        heatmap (array): (R, K, S, S) float32 heatmap logits.
        roi (array): (R, 4) float32 boxes (x_min, y_min, x_max, y_max) in pixels, on the
            heatmap's device or on the host (then their sizes cost no device sync).
        max_elements (int): values of resized maps computed at once (memory bound).
        n_row (int): output rows of each map resized in the first pass, besides four
            per heatmap row.

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
    R, K, S = heatmap.shape[:3]
    f32 = numpy.float32
    roi_xp = backend.get_array_module(roi)
    grid = roi_xp.ceil(roi_xp.maximum(roi[:, 2:] - roi[:, :2], f32(1))).astype(numpy.int64)
    (grid_host,) = detector.to_host(grid)
    roi = xp.asarray(roi, f32)
    size = xp.maximum(roi[:, 2:] - roi[:, :2], f32(1))  # (w, h)
    grid = xp.ceil(size)
    grid_host = grid_host.reshape(-1, 2)
    value = xp.zeros((R, K), f32)
    cell = xp.zeros((R, K, 2), numpy.int64)  # (column, row)
    exact = xp.zeros((R, K), bool)
    order = numpy.argsort(-grid_host[:, 0], kind='stable')
    width, height = grid_host[order, 0], grid_host[order, 1]
    for start, stop in _groups(width, numpy.full(R, S + n_row), K, max_elements):
        members = xp.asarray(order[start:stop])
        found = _search_group(heatmap[members].astype(f32, copy=False),
                              xp.asarray(height[start:stop]), xp.asarray(width[start:stop]),
                              (int(height[start:stop].max()), int(width[start])), n_row)
        value[members], exact[members] = found[0], found[3]
        cell[members] = xp.stack((found[2], found[1]), axis=-1)
    # NOTE: the rare maps whose maximum the first pass could not prove: resized whole,
    # each on its own (one heatmap per item)
    (missed,) = detector.to_host(~exact)
    item, channel = numpy.nonzero(missed)
    order = numpy.argsort(-grid_host[item, 1], kind='stable')
    item, channel = item[order], channel[order]
    width, height = grid_host[item, 0], grid_host[item, 1]
    for start, stop in _groups(height, width, 1, max_elements):
        members, channels = xp.asarray(item[start:stop]), xp.asarray(channel[start:stop])
        H, W = int(height[start]), int(width[start:stop].max())
        resized = _resize_group(heatmap[members, channels][:, None].astype(f32, copy=False),
                                xp.asarray(height[start:stop]), xp.asarray(width[start:stop]),
                                H, W)
        found = _first_maximum(resized, xp.broadcast_to(xp.arange(H), (1, 1, H)))
        value[members, channels] = found[0][:, 0]
        cell[members, channels] = xp.stack((found[2], found[1]), axis=-1)[:, 0]
    correction = (size / grid)[:, None, :]
    point = (cell.astype(f32) + f32(0.5)) * correction + roi[:, None, :2]
    return point, value
