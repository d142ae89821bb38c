"""Instance masks as runs of foreground pixels, for the mask metrics.

An evaluation of COCO val2017 holds about half a million predicted masks; as dense
(H, W) arrays they would need over 100 GB, as runs a few hundred MB. The runs follow
COCO's RLE: the pixels of a mask are read column by column (Fortran order), so a mask
of COCO's own RLE maps onto the same runs.

Intersections of mask pairs are computed from the runs without decoding them: the
pixels that mask A shares with mask B are, for each run [s, e) of A, the pixels of B
before e minus those before s; "pixels of B before p" is one binary search in B's runs.
Pairs whose bounding boxes do not touch are 0 without any search, as in pycocotools'
rleIou.
"""

import numpy

from cvzoo import errors

# NOTE: the most run look-ups held in memory at once by :meth:`intersection`.
_LOOKUPS_PER_CHUNK = 2 ** 22


class RunLengthMasks:
    """N instance masks (possibly of different images and sizes) as runs of ones.

    The constructor takes the attributes ``starts``, ``ends``, ``offsets``, ``heights``,
    ``size`` and, when known, ``bbox`` (else computed from the runs).

    Attributes:
        starts, ends: (K,) int64 [start, end) of each run, as positions in the mask's
            column-major flattening (``x * H + y``); sorted per mask.
        offsets: (N + 1,) int64; the runs of mask i are ``offsets[i]:offsets[i + 1]``.
        heights: (N,) int64 height H of each mask's image.
        size: (H, W) of the image when all masks come from one image (from_masks), else
            None.
        area: (N,) int64 pixels of each mask.
        bbox: (N, 4) int64 (x_min, y_min, x_max, y_max), exclusive max; zeros when empty.

    >>> masks = numpy.zeros((2, 4, 5), bool)
    >>> masks[0, 1:3, 1:4] = True
    >>> masks[1, 2:4, 0:2] = True
    >>> runs = RunLengthMasks.from_masks(masks)
    >>> runs.area.tolist(), runs.bbox.tolist()
    ([6, 4], [[1, 1, 4, 3], [0, 2, 2, 4]])
    >>> runs.intersection(numpy.array([0]), runs, numpy.array([1])).tolist()
    [1.0]
    """

    def __init__(self, starts, ends, offsets, heights, size=None, *, bbox=None):
        self.size = None if size is None else tuple(int(v) for v in size)
        self.starts = numpy.asarray(starts, numpy.int64)
        self.ends = numpy.asarray(ends, numpy.int64)
        self.offsets = numpy.asarray(offsets, numpy.int64)
        self.heights = numpy.asarray(heights, numpy.int64)
        n_run = numpy.diff(self.offsets)
        before = numpy.r_[0, numpy.cumsum(self.ends - self.starts)]
        self.area = before[self.offsets[1:]] - before[self.offsets[:-1]]
        # NOTE: boxes of masks already encoded are passed on (concatenate), not recomputed.
        self.bbox = self._bboxes(n_run) if bbox is None else numpy.asarray(bbox, numpy.int64)
        # NOTE: the look-up tables are built on first use: an evaluator keeps many
        # RunLengthMasks and searches only their concatenation.
        self._tables = None

    def _lookup(self):
        """``(before, stride, keys)``: the pixels in all runs before each run, the key
        stride and the sorted (mask, start) key of each run."""
        if self._tables is None:
            before = numpy.zeros(len(self.starts) + 1, numpy.int64)
            numpy.cumsum(self.ends - self.starts, out=before[1:])
            # NOTE: one sorted key per run (mask, start) lets one searchsorted serve all
            # masks.
            stride = int(self.ends.max(initial=0)) + 1
            mask_of_run = numpy.repeat(numpy.arange(len(self)), numpy.diff(self.offsets))
            self._tables = before, stride, mask_of_run * stride + self.starts
        return self._tables

    def __len__(self):
        return len(self.offsets) - 1

    @classmethod
    def from_masks(cls, masks):
        """Encode (R, H, W) bool masks of one image.

        Raises:
            ValueError: ``masks`` is not three-dimensional.
        """
        masks = numpy.asarray(masks)
        if masks.ndim != 3:
            raise errors.UsageError(f'masks: expected an (R, H, W) array, got shape {masks.shape}')
        n_mask, H, W = masks.shape
        padded = numpy.zeros((n_mask, H * W + 2), numpy.int8)
        padded[:, 1:-1] = masks.astype(bool).transpose(0, 2, 1).reshape(n_mask, H * W)
        rows, cols = numpy.nonzero(padded[:, 1:] != padded[:, :-1])
        n_run = numpy.bincount(rows[0::2], minlength=n_mask)
        return cls(cols[0::2], cols[1::2], numpy.r_[0, numpy.cumsum(n_run)],
                   numpy.full(n_mask, H), size=(H, W))

    @classmethod
    def concatenate(cls, parts):
        """One RunLengthMasks holding the masks of ``parts`` in order."""
        parts = list(parts)
        if not parts:
            return cls([], [], [0], [])
        n_run = numpy.concatenate([numpy.diff(p.offsets) for p in parts])
        return cls(numpy.concatenate([p.starts for p in parts]),
                   numpy.concatenate([p.ends for p in parts]),
                   numpy.r_[0, numpy.cumsum(n_run)],
                   numpy.concatenate([p.heights for p in parts]),
                   bbox=numpy.concatenate([p.bbox for p in parts]))

    def to_masks(self, size):
        """Decode every mask to an (N, H, W) bool array of one image size (H, W)."""
        H, W = size
        flat = numpy.zeros((len(self), H * W + 1), numpy.int64)
        mask_of_run = numpy.repeat(numpy.arange(len(self)), numpy.diff(self.offsets))
        numpy.add.at(flat, (mask_of_run, self.starts), 1)
        numpy.add.at(flat, (mask_of_run, self.ends), -1)
        return (numpy.cumsum(flat[:, :-1], axis=1) > 0).reshape(len(self), W, H).transpose(
            0, 2, 1)

    def _bboxes(self, n_run):
        bbox = numpy.zeros((len(self), 4), numpy.int64)
        if not len(self.starts):
            return bbox
        height = numpy.repeat(self.heights, n_run)
        last = self.ends - 1
        one_column = self.starts // height == last // height
        top = numpy.where(one_column, self.starts % height, 0)
        bottom = numpy.where(one_column, last % height + 1, height)
        full = n_run > 0
        first_run = self.offsets[:-1][full]
        bbox[full, 0] = self.starts[first_run] // self.heights[full]
        bbox[full, 2] = last[self.offsets[1:][full] - 1] // self.heights[full] + 1
        bbox[full, 1] = numpy.minimum.reduceat(top, first_run)
        bbox[full, 3] = numpy.maximum.reduceat(bottom, first_run)
        return bbox

    def pixels_before(self, mask_index, position):
        """Pixels of mask ``mask_index`` at column-major positions below ``position``.

        Args:
            mask_index, position: int64 arrays of one shape.
        """
        before, stride, keys = self._lookup()
        key = mask_index * stride + numpy.minimum(position, stride - 1)
        run = numpy.searchsorted(keys, key, side='right') - 1
        first = self.offsets[mask_index]
        inside = run >= first
        run = numpy.maximum(run, 0)
        partial = numpy.clip(position - self.starts[run], 0, self.ends[run] - self.starts[run])
        count = before[run] - before[first] + partial
        return numpy.where(inside, count, 0)

    def intersection(self, index, other, other_index):
        """Shared pixels of mask pairs (``self[index[p]]``, ``other[other_index[p]]``).

        Both masks of a pair must come from images of the same size.

        Args:
            index, other_index: (P,) int arrays of mask indexes.
            other (RunLengthMasks): the second masks of the pairs (may be ``self``).

        Returns:
            (P,) float64 pixel counts.
        """
        index = numpy.asarray(index, numpy.int64).ravel()
        other_index = numpy.asarray(other_index, numpy.int64).ravel()
        result = numpy.zeros(len(index))
        a, b = self.bbox[index], other.bbox[other_index]
        touch = ((numpy.minimum(a[:, 2], b[:, 2]) > numpy.maximum(a[:, 0], b[:, 0]))
                 & (numpy.minimum(a[:, 3], b[:, 3]) > numpy.maximum(a[:, 1], b[:, 1])))
        n_self = numpy.diff(self.offsets)[index]
        n_other = numpy.diff(other.offsets)[other_index]
        # NOTE: the mask with fewer runs is walked, the other searched.
        walk_self = touch & (n_self <= n_other)
        walk_other = touch & (n_self > n_other)
        result[walk_self] = _walk(self, index[walk_self], other, other_index[walk_self])
        result[walk_other] = _walk(other, other_index[walk_other], self, index[walk_other])
        return result


def _walk(walked, walked_index, searched, searched_index):
    """Sum over the runs of each walked mask of the searched mask's pixels inside them."""
    total = numpy.zeros(len(walked_index))
    n_run = numpy.diff(walked.offsets)[walked_index]
    start = 0
    while start < len(walked_index):
        stop = start + max(1, int(numpy.searchsorted(
            numpy.cumsum(n_run[start:]), _LOOKUPS_PER_CHUNK, side='right')))
        counts = n_run[start:stop]
        pair = numpy.repeat(numpy.arange(start, stop), counts)
        first_of_pair = numpy.cumsum(counts) - counts
        run = (walked.offsets[walked_index[pair]]
               + numpy.arange(len(pair)) - numpy.repeat(first_of_pair, counts))
        mask = searched_index[pair]
        inside = (searched.pixels_before(mask, walked.ends[run])
                  - searched.pixels_before(mask, walked.starts[run]))
        total[start:stop] = numpy.bincount(pair - start, weights=inside,
                                           minlength=stop - start)
        start = stop
    return total


def per_image(name, values, n_img=None):
    """A list with one RunLengthMasks per image of (R, H, W) masks or RunLengthMasks.

    Raises:
        ValueError: naming ``name`` and the image: a dense entry that is not (R, H, W), or
            a list whose length is not ``n_img``.
    """
    if isinstance(values, RunLengthMasks):
        raise TypeError(f'{name}: expected one entry per image, got a single '
                        f'RunLengthMasks')
    result = []
    for i, value in enumerate(values):
        if not isinstance(value, RunLengthMasks):
            value = numpy.asarray(value)
            if value.ndim != 3:
                raise errors.UsageError(f'{name}[{i}]: expected an (R, H, W) array, got shape '
                                        f'{value.shape}')
            value = RunLengthMasks.from_masks(value)
        result.append(value)
    if n_img is not None and len(result) != n_img:
        raise errors.UsageError(f'{name}: expected one entry per image ({n_img} images), got '
                                f'{len(result)}')
    return result


def check_same_sizes(pred_masks, gt_masks):
    """Refuse an image whose predicted masks are of another size than its ground truth."""
    for i, (pred, gt) in enumerate(zip(pred_masks, gt_masks)):
        if pred.size is not None and gt.size is not None and pred.size != gt.size:
            raise errors.UsageError(f'pred_masks[{i}]: expected masks of the image size of '
                                    f'gt_masks[{i}] {gt.size}, got {pred.size}')
