"""Decode COCO segmentations (polygons, compressed and uncompressed RLE) with NumPy."""

import numpy


def rle_string_to_counts(text):
    """Decode COCO's compressed RLE string into run lengths.

    Each count is written in 5-bit groups as characters offset by 48, least significant
    group first, bit 0x20 meaning "more groups follow" and bit 0x10 of the last group the
    sign; from the third count on, a count is stored as the difference to the count two
    places before it.
    """
    counts = []
    value, shift = 0, 0
    for byte in text.encode('ascii') if isinstance(text, str) else bytes(text):
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
    return numpy.array(counts, numpy.int64)


def rle_to_mask(rle, size=None):
    """Decode an RLE dict ``{'size': [H, W], 'counts': str or list}`` into (H, W) bool."""
    H, W = rle.get('size', size)
    counts = rle['counts']
    if isinstance(counts, (str, bytes)):
        counts = rle_string_to_counts(counts)
    counts = numpy.asarray(counts, numpy.int64)
    if counts.sum() != H * W or (counts < 0).any():
        raise ValueError(f'counts: expected non-negative runs summing to H * W = {H * W}, '
                         f'got a sum of {int(counts.sum())}')
    values = numpy.arange(len(counts)) % 2 == 1  # runs start with zeros
    # NOTE: COCO runs go down the columns (Fortran order), hence the transpose.
    return numpy.repeat(values, counts).reshape(W, H).T


def polygons_to_mask(polygons, size):
    """Rasterise COCO polygons ([[x0, y0, x1, y1, ...], ...]) into an (H, W) bool mask.

    A pixel is inside when its centre (x + 0.5, y + 0.5) is inside an odd number of
    polygons' boundaries (even-odd rule per polygon, then the union of the polygons).
    pycocotools samples its own way, so masks can differ from it along the border.
    """
    H, W = size
    mask = numpy.zeros((H, W), bool)
    for polygon in polygons:
        xy = numpy.asarray(polygon, numpy.float64).reshape(-1, 2)
        if len(xy) >= 3:
            mask |= _fill_polygon(xy, H, W)
    return mask


def _fill_polygon(xy, H, W):
    start, end = xy, numpy.roll(xy, -1, axis=0)
    centers = numpy.arange(H) + 0.5
    y0, y1 = start[:, 1][:, None], end[:, 1][:, None]
    crosses = (y0 <= centers) != (y1 <= centers)  # half-open: each crossing counted once
    edge, row = numpy.nonzero(crosses)
    t = (centers[row] - start[edge, 1]) / (end[edge, 1] - start[edge, 1])
    x = start[edge, 0] + t * (end[edge, 0] - start[edge, 0])
    order = numpy.lexsort((x, row))
    row, x = row[order], x[order]
    # consecutive crossings of a row pair up; fill pixels whose centre lies in [x_a, x_b)
    first = numpy.clip(numpy.ceil(x[0::2] - 0.5), 0, W).astype(numpy.int64)
    last = numpy.clip(numpy.ceil(x[1::2] - 0.5), 0, W).astype(numpy.int64)
    change = numpy.zeros((H, W + 1), numpy.int64)
    numpy.add.at(change, (row[0::2], first), 1)
    numpy.add.at(change, (row[0::2], last), -1)
    return numpy.cumsum(change, axis=1)[:, :W] > 0


def segmentation_to_mask(segmentation, size):
    """Decode any COCO ``segmentation`` field (polygon list or RLE dict) to (H, W) bool."""
    if isinstance(segmentation, dict):
        return rle_to_mask(segmentation, size)
    return polygons_to_mask(segmentation, size)
