"""MultiboxCoder: SSD's default boxes (anchors) and the box encoding of its loc head.

Liu et al., "SSD: Single Shot MultiBox Detector", ECCV 2016, section 2.2 (matching,
eq. 2 for the encoding) and section 2.2 "Choosing scales and aspect ratios".

Boxes follow cvzoo's x-first order. The anchors are ``(cx, cy, w, h)`` in pixels of the
network input, in the order of the multibox heads' outputs: feature map by feature
map, then row (y) by row, column (x) by column, then per location the square of side
``sizes[k]``, the square of side ``sqrt(sizes[k] * sizes[k + 1])`` and, for each aspect
ratio ``a``, the wide box ``(s sqrt(a), s / sqrt(a))`` then the tall one.

A regression ``mb_loc`` of an anchor ``d`` is ``(dx, dy, dw, dh)``::

    dx = (bx - dcx) / (v0 dw)    dy = (by - dcy) / (v0 dh)
    dw = log(bw / dw) / v1       dh = log(bh / dh) / v1

with the variance ``(v0, v1) = (0.1, 0.2)``.
"""

import numpy

import cvzoo.core.links as L
from cvzoo.core import backend
from cvzoo.utils import bbox as bbox_utils


def generate_default_bbox(grids, aspect_ratios, steps, sizes):
    """Return the anchors of an SSD, (K, 4) float32 ``(cx, cy, w, h)`` in input pixels.

    Args:
        grids (sequence of int): side of each (square) feature map.
        aspect_ratios (sequence of sequence of number): extra aspect ratios per map.
        steps (sequence of float): anchor spacing on each map, in input pixels.
        sizes (sequence of float): ``len(grids) + 1`` base sizes in input pixels.

    >>> generate_default_bbox((1,), ((2,),), (300,), (30, 60)).shape
    (4, 4)
    """
    parts = []
    for k, grid in enumerate(grids):
        size = float(sizes[k])
        sides = [(size, size), (numpy.sqrt(size * sizes[k + 1]),) * 2]
        for ratio in aspect_ratios[k]:
            root = numpy.sqrt(ratio)
            sides += [(size * root, size / root), (size / root, size * root)]
        center = (numpy.arange(grid) + 0.5) * steps[k]
        cy, cx = numpy.meshgrid(center, center, indexing='ij')
        centers = numpy.stack((cx.ravel(), cy.ravel()), axis=1)  # (grid * grid, 2)
        n_anchor, n_location = len(sides), len(centers)
        parts.append(numpy.concatenate((
            numpy.repeat(centers, n_anchor, axis=0),
            numpy.tile(numpy.asarray(sides), (n_location, 1))), axis=1))
    return numpy.concatenate(parts).astype(numpy.float32)


def _corners(center_size):
    """(..., 4) ``(cx, cy, w, h)`` -> ``(x_min, y_min, x_max, y_max)``."""
    xp = backend.get_array_module(center_size)
    half = center_size[..., 2:] / 2
    return xp.concatenate((center_size[..., :2] - half, center_size[..., :2] + half), axis=-1)


class MultiboxCoder(L.Link):
    """Encode ground truth boxes to SSD's targets and decode its outputs to boxes.

    The anchors are a persistent array of this link (``default_bbox``), so
    ``to_device`` moves them with the model.

    Args:
        grids, aspect_ratios, steps, sizes: as :func:`generate_default_bbox`.
        variance (tuple of float): ``(v0, v1)`` of the centre and size encodings.

    Attributes:
        default_bbox (array): (K, 4) float32 ``(cx, cy, w, h)`` in input pixels.

    Raises:
        ValueError: lengths that do not fit ``grids``.
    """

    def __init__(self, grids, aspect_ratios, steps, sizes, variance=(0.1, 0.2)):
        super().__init__()
        for name, values, length in (('aspect_ratios', aspect_ratios, len(grids)),
                                     ('steps', steps, len(grids)),
                                     ('sizes', sizes, len(grids) + 1)):
            if len(values) != length:
                raise ValueError(f'{name}: expected {length} entries for {len(grids)} '
                                 f'feature maps, got {len(values)}')
        if len(variance) != 2 or min(variance) <= 0:
            raise ValueError(f'variance: expected two positive numbers, got {variance!r}')
        self.variance = tuple(float(v) for v in variance)
        self.add_persistent('default_bbox',
                            generate_default_bbox(grids, aspect_ratios, steps, sizes))

    def encode(self, bbox, label, iou_thresh=0.5, loc_bbox=None):
        """Targets of one image: each anchor's regression and class (0 = background).

        An anchor takes the ground truth box it overlaps most when that IoU is at least
        ``iou_thresh``; besides, each ground truth box takes the anchor that overlaps it
        most (so that every box has a positive anchor).

        Args:
            bbox (array): (R, 4) float, ``(x_min, y_min, x_max, y_max)`` in input pixels.
            label (array): (R,) int, class ids in ``[0, n_fg_class)``.
            iou_thresh (float): the matching threshold.
            loc_bbox (array or None): (R, 4) the boxes the positive anchors regress to,
                one per box of ``bbox`` (default ``bbox``): the same boxes in a model's
                box convention, matched as ``bbox`` is.

        Returns:
            tuple: ``mb_loc`` (K, 4) float32 ``(dx, dy, dw, dh)`` (0 for background
            anchors) and ``mb_label`` (K,) int32 in ``[0, n_fg_class]``.
        """
        xp = backend.get_array_module(self.default_bbox)
        n_anchor = len(self.default_bbox)
        if len(bbox) == 0:
            return (xp.zeros((n_anchor, 4), numpy.float32), xp.zeros(n_anchor, numpy.int32))
        bbox = xp.asarray(bbox, dtype=numpy.float32)
        iou = bbox_utils.bbox_iou(_corners(self.default_bbox), bbox)  # (K, R)
        index = iou.argmax(axis=1)
        index[iou.max(axis=1) < iou_thresh] = -1
        # NOTE: each box forces its best anchor in one vectorised step; ChainerCV matches
        # these greedily, which differs only when two boxes share their best anchor.
        best = iou.argmax(axis=0)
        overlapping = iou[best, xp.arange(len(bbox))] > 1e-6
        index[best[overlapping]] = xp.arange(len(bbox))[overlapping]
        positive = index >= 0
        loc_bbox = bbox if loc_bbox is None else xp.asarray(loc_bbox, dtype=numpy.float32)
        mb_loc = self.encode_loc(loc_bbox[xp.maximum(index, 0)])
        mb_loc[~positive] = 0
        mb_label = xp.where(positive, xp.asarray(label)[xp.maximum(index, 0)] + 1, 0)
        return mb_loc.astype(numpy.float32), mb_label.astype(numpy.int32)

    def encode_loc(self, bbox):
        """Corner boxes (..., K, 4), one per anchor -> regressions (..., K, 4).

        The inverse of :meth:`decode_bbox`.
        """
        xp = backend.get_array_module(bbox)
        anchor = self.default_bbox
        # NOTE: a degenerate box would give log(0); its size is floored at 1e-6 pixels.
        size = xp.maximum(bbox[..., 2:] - bbox[..., :2], 1e-6)
        center = (bbox[..., :2] + bbox[..., 2:]) / 2
        return xp.concatenate((
            (center - anchor[:, :2]) / (self.variance[0] * anchor[:, 2:]),
            xp.log(size / anchor[:, 2:]) / self.variance[1]), axis=-1)

    def decode_bbox(self, mb_loc):
        """Regressions (..., K, 4) -> boxes (..., K, 4) ``(x_min, y_min, x_max, y_max)``."""
        xp = backend.get_array_module(mb_loc)
        anchor = self.default_bbox
        center = anchor[:, :2] + mb_loc[..., :2] * self.variance[0] * anchor[:, 2:]
        size = anchor[:, 2:] * xp.exp(mb_loc[..., 2:] * self.variance[1])
        return _corners(xp.concatenate((center, size), axis=-1))

    def decode(self, mb_loc, mb_conf):
        """Boxes and foreground class scores of a batch, on the device.

        Args:
            mb_loc (array): (B, K, 4) float, the loc head's ``(dx, dy, dw, dh)``.
            mb_conf (array): (B, K, n_fg_class + 1) float logits, background first.

        Returns:
            tuple: ``bbox`` (B, K, 4) in input pixels and ``score`` (B, K, n_fg_class),
            the softmax over all classes without its background column.
        """
        xp = backend.get_array_module(mb_loc, mb_conf)
        score = xp.exp(mb_conf - mb_conf.max(axis=-1, keepdims=True))
        score /= score.sum(axis=-1, keepdims=True)
        return self.decode_bbox(mb_loc), score[..., 1:]
