"""Decode COCO segmentations (polygons, compressed and uncompressed RLE) with NumPy.

A segmentation comes from a json that may be wrong or hostile: every function here checks
its input and raises ValueError saying what is wrong (the dataset adds the file and the
entry), and decides from sizes before it allocates. The mask is always the image's (H, W):
an RLE must declare that size, so its few bytes cannot ask for a 60000x60000 mask.
"""

import numpy

from cvzoo.datasets.coco.coco_annotations import describe

# NOTE: the most (polygon edge, pixel row) crossings one segmentation may hold: each takes
# about 50 bytes while the mask is drawn. A traced outline crosses each row it spans a few
# times; 2 ** 24 is a zig-zag of thousands of crossings per row on a 4000-row image.
MAX_POLYGON_CROSSINGS = 2 ** 24
# NOTE: a count takes at most 13 five-bit groups (pycocotools reads them into 64 bits);
# more would be a number of unbounded size, which Python would happily build.
_MAX_GROUPS = 13
_FIRST, _LAST = ord('0'), ord('0') + 63  # the 64 characters of the RLE alphabet


def rle_string_to_counts(text):
    """Decode COCO's compressed RLE string into run lengths.

    Each count is written in 5-bit groups as characters offset by 48, least significant
    group first, bit 0x20 meaning "more groups follow" and bit 0x10 of the last group the
    sign; from the third count on, a count is stored as the difference to the count two
    places before it.

    Returns:
        (N,) int64 array.

    Raises:
        ValueError: a character outside '0'..'o', a count of more than 13 groups (or
            beyond int64), or a string that ends inside a count.
    """
    try:
        data = text.encode('ascii') if isinstance(text, str) else bytes(text)
    except UnicodeEncodeError:
        raise ValueError("'counts': not a compressed RLE (a character that is not "
                         "ASCII)") from None
    codes = numpy.frombuffer(data, numpy.uint8)
    bad = numpy.flatnonzero((codes < _FIRST) | (codes > _LAST))
    if len(bad):
        raise ValueError(f"'counts': not a compressed RLE (character {data[bad[0]:bad[0] + 1]!r} "
                         f'at {int(bad[0])} is not one of 0..o)')
    more = ((codes - _FIRST) & 0x20) != 0
    if len(codes) and more[-1]:
        raise ValueError("'counts': not a compressed RLE (it ends inside a count)")
    ends = numpy.flatnonzero(~more)
    if len(ends) and numpy.diff(ends, prepend=-1).max() > _MAX_GROUPS:
        raise ValueError(f"'counts': not a compressed RLE (a count of more than {_MAX_GROUPS} "
                         f'groups)')
    counts = []
    value, shift = 0, 0
    for byte in data:
        code = byte - 48
        value |= (code & 0x1F) << shift
        shift += 5
        if code & 0x20:
            continue
        if code & 0x10:
            value -= 1 << shift
        if len(counts) > 2:
            value += counts[-2]
        counts.append(value)
        value, shift = 0, 0
    return _int64(counts)


def _int64(counts):
    try:
        return numpy.array(counts, numpy.int64)
    except OverflowError:
        raise ValueError("'counts': a run longer than 64 bits can hold") from None


def _counts_array(counts):
    """The run lengths of an RLE's 'counts' (a compressed string or a list of ints)."""
    if isinstance(counts, (str, bytes)):
        return rle_string_to_counts(counts)
    if not (type(counts) is list and set(map(type, counts)) <= {int}):
        raise ValueError(f"'counts': expected a compressed RLE string or a list of ints, "
                         f'got {describe(counts)}')
    return _int64(counts)


def rle_to_mask(rle, size):
    """Decode an RLE dict ``{'size': [H, W], 'counts': str or list}`` into (H, W) bool.

    Args:
        rle (dict): COCO's RLE; 'size' may be left out, else it must be ``size``.
        size (tuple): (H, W) of the image.

    Raises:
        ValueError: a 'size' other than the image's, or counts that are not runs of
            non-negative lengths summing to H * W.
    """
    H, W = size
    declared = rle.get('size', [H, W])
    if not (type(declared) is list and list(map(type, declared)) == [int, int]
            and declared == [H, W]):
        raise ValueError(f"'size' must be the image's [height, width] = [{H}, {W}], got "
                         f'{describe(declared)}')
    if 'counts' not in rle:
        raise ValueError("'counts' is missing")
    counts = _counts_array(rle['counts'])
    if len(counts) and (counts.min() < 0 or counts.max() > H * W):
        raise ValueError(f"'counts': runs must be between 0 and H * W = {H * W}, got one of "
                         f'{int(counts.min() if counts.min() < 0 else counts.max())}')
    if int(counts.sum()) != H * W:
        raise ValueError(f"'counts': runs must sum to H * W = {H * W}, got a sum of "
                         f'{int(counts.sum())}')
    values = numpy.arange(len(counts)) % 2 == 1  # runs start with zeros
    # NOTE: COCO runs go down the columns (Fortran order), hence the transpose.
    return numpy.repeat(values, counts).reshape(W, H).T


def _vertices(polygon, k):
    """(N, 2) float64 vertices of polygon ``k`` ([x0, y0, x1, y1, ...]), checked."""
    if not (type(polygon) is list and set(map(type, polygon)) <= {int, float}):
        raise ValueError(f'polygon {k}: expected a list of numbers x0, y0, x1, y1, ..., got '
                         f'{describe(polygon)}')
    if len(polygon) % 2:
        raise ValueError(f'polygon {k}: {len(polygon)} coordinates, an odd number (x, y '
                         f'pairs)')
    try:
        xy = numpy.array(polygon, numpy.float64).reshape(-1, 2)
        finite = bool(numpy.isfinite(xy).all())
    except OverflowError:  # an int of 400 digits
        finite = False
    if not finite:
        raise ValueError(f'polygon {k}: a coordinate is not a finite number: '
                         f'{describe(polygon)}')
    return xy


def _row_ranges(xy, H):
    """For each edge of polygon ``xy``, the rows [low, high) whose centre r + 0.5 it
    crosses: those in [min(y0, y1), max(y0, y1)), so a vertex on a centre counts once."""
    centers = numpy.arange(H) + 0.5
    y0, y1 = xy[:, 1], numpy.roll(xy[:, 1], -1)
    return (numpy.searchsorted(centers, numpy.minimum(y0, y1)),
            numpy.searchsorted(centers, numpy.maximum(y0, y1)))


def _spans(xy, low, high):
    """Rows, first and end x of the pixel runs that polygon ``xy`` fills (even-odd rule):
    the crossings of a row, sorted by x, pair up into runs."""
    start, end = xy, numpy.roll(xy, -1, axis=0)
    n_rows = high - low
    edge = numpy.repeat(numpy.arange(len(xy)), n_rows)
    row = low[edge] + numpy.arange(len(edge)) - numpy.repeat(numpy.cumsum(n_rows) - n_rows,
                                                              n_rows)
    t = (row + 0.5 - start[edge, 1]) / (end[edge, 1] - start[edge, 1])
    x = start[edge, 0] + t * (end[edge, 0] - start[edge, 0])
    order = numpy.lexsort((x, row))
    row, x = row[order], x[order]
    return row[0::2], x[0::2], x[1::2]


def polygons_to_mask(polygons, size):
    """Rasterise COCO polygons ([[x0, y0, x1, y1, ...], ...]) into an (H, W) bool mask.

    A pixel is inside when its centre (x + 0.5, y + 0.5) is inside an odd number of
    polygons' boundaries (even-odd rule per polygon, then the union of the polygons).
    pycocotools samples its own way, so masks can differ from it along the border. A
    polygon of one or two points encloses no pixel centre and adds nothing.

    Raises:
        ValueError: not a list of lists of numbers, an odd number of coordinates, a
            coordinate that is not finite, or more than MAX_POLYGON_CROSSINGS crossings.
    """
    H, W = size
    if type(polygons) is not list:
        raise ValueError(f'expected a list of polygons or an RLE object, got '
                         f'{describe(polygons)}')
    shapes = [_vertices(polygon, k) for k, polygon in enumerate(polygons)]
    shapes = [(xy,) + _row_ranges(xy, H) for xy in shapes if len(xy) >= 3]
    crossings = sum(int((high - low).sum()) for _, low, high in shapes)
    if crossings > MAX_POLYGON_CROSSINGS:
        raise ValueError(f'its polygons cross pixel rows {crossings} times, more than the '
                         f'{MAX_POLYGON_CROSSINGS} a segmentation may')
    # +1 where a run starts, -1 where it ends; a pixel is in the mask when the running
    # sum along its row is positive (the runs of one polygon do not overlap)
    change = numpy.zeros(H * (W + 1), numpy.int64)
    for xy, low, high in shapes:
        row, x_first, x_end = _spans(xy, low, high)
        first = numpy.clip(numpy.ceil(x_first - 0.5), 0, W).astype(numpy.int64)
        end = numpy.clip(numpy.ceil(x_end - 0.5), 0, W).astype(numpy.int64)
        change += numpy.bincount(row * (W + 1) + first, minlength=len(change))
        change -= numpy.bincount(row * (W + 1) + end, minlength=len(change))
    return numpy.cumsum(change.reshape(H, W + 1), axis=1)[:, :W] > 0


def segmentation_to_mask(segmentation, size):
    """Decode any COCO ``segmentation`` field (polygon list or RLE dict) to (H, W) bool.

    Args:
        segmentation: the json's field.
        size (tuple): (H, W) of the image; the mask has this size.

    Raises:
        ValueError: the field is neither, or is malformed (see the functions above).
    """
    if isinstance(segmentation, dict):
        return rle_to_mask(segmentation, size)
    return polygons_to_mask(segmentation, size)
