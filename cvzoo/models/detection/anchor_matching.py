"""torchvision's ``Matcher`` for RetinaNet: each anchor to a ground-truth box or not."""

import numpy

from cvzoo.core import backend
from cvzoo.utils import bbox as bbox_utils

BACKGROUND = -1
IGNORED = -2


def match_anchors(anchor, bbox, fg_thresh=0.5, bg_thresh=0.4, allow_low_quality_matches=True):
    """Assign every anchor to its best box by IoU, to the background, or to neither.

    An anchor whose best IoU is ``>= fg_thresh`` takes that box; ``< bg_thresh`` is
    background (-1); in between it is ignored (-2). With ``allow_low_quality_matches``
    the anchors tied for a box's highest IoU also take their own best box (torchvision's
    rule; here only for a highest IoU above 0, so a box that overlaps no anchor does not
    make every non-overlapping anchor foreground).

    Args:
        anchor (array): (K, 4) float32 anchors.
        bbox (array): (R, 4) ground-truth boxes, same device.
        fg_thresh, bg_thresh (float): the IoU thresholds (0.5, 0.4).
        allow_low_quality_matches (bool): see above.

    Returns:
        array: (K,) int32: a box index, -1 (background) or -2 (ignored).

    >>> anchor = numpy.array([[0, 0, 10, 10], [0, 0, 10, 4], [50, 50, 60, 60]], numpy.float32)
    >>> match_anchors(anchor, numpy.array([[0, 0, 10, 9]], numpy.float32))
    array([ 0, -2, -1], dtype=int32)
    """
    if not 0 <= bg_thresh <= fg_thresh:
        raise ValueError(f'bg_thresh: expected 0 <= bg_thresh <= fg_thresh ({fg_thresh}), '
                         f'got {bg_thresh}')
    xp = backend.get_array_module(anchor, bbox)
    if len(bbox) == 0:
        return xp.full(len(anchor), BACKGROUND, numpy.int32)
    iou = bbox_utils.bbox_iou(bbox, anchor)
    matched = iou.argmax(axis=0).astype(numpy.int32)
    best = iou.max(axis=0)
    result = matched.copy()
    result[best < fg_thresh] = IGNORED
    result[best < bg_thresh] = BACKGROUND
    if allow_low_quality_matches:
        highest = iou.max(axis=1)
        _, tied = xp.nonzero((iou == highest[:, None]) & (highest[:, None] > 0))
        result[tied] = matched[tied]
    return result
