"""Encode (H, W) masks as COCO RLE, the inverse of :mod:`coco_mask_decoding`."""

import numpy


def counts_to_rle_string(counts):
    """COCO's compressed RLE string of run lengths (pycocotools' ``rleToString``).

    Each count goes out in 5-bit groups, least significant first, as characters offset by
    48; bit 0x20 says more groups follow and bit 0x10 of the last group is the sign. From
    the fourth count on, a count is written as its difference to the count two before.
    """
    chars = []
    for k, count in enumerate(counts):
        value = int(count) - (int(counts[k - 2]) if k > 2 else 0)
        more = True
        while more:
            group = value & 0x1F
            value >>= 5  # arithmetic shift: a negative value ends at -1
            more = value != -1 if group & 0x10 else value != 0
            chars.append(chr((group | 0x20 if more else group) + 48))
    return ''.join(chars)


def mask_to_rle(mask, compressed=True):
    """The COCO RLE of an (H, W) bool mask.

    Args:
        mask: (H, W) array, nonzero inside.
        compressed (bool): 'counts' as pycocotools' string (True) or as a list of ints.

    Returns:
        dict: ``{'size': [H, W], 'counts': str or list of int}``; runs go down the columns
        and start with a run of zeros.
    """
    mask = numpy.asarray(mask).astype(bool)
    H, W = mask.shape
    flat = mask.T.reshape(-1)  # COCO runs go down the columns
    changes = numpy.flatnonzero(flat[1:] != flat[:-1]) + 1
    counts = numpy.diff(numpy.concatenate([[0], changes, [flat.size]])).tolist()
    if flat.size and flat[0]:
        counts = [0] + counts
    return {'size': [H, W], 'counts': counts_to_rle_string(counts) if compressed else counts}
