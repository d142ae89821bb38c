"""fpn_proposals: the RoIs of a batch from an FPN RPN's candidates of every level.

Both FPN RPNs (ChainerCV's and torchvision's) suppress their candidates per image and
per level, then keep each image's best. The sizes of what survives depend on the data,
so the candidates are read back in one transfer (one host sync on a GPU, whatever the
number of images and levels), suppressed by one batched NMS over the (image, level)
groups on the host, and the RoIs are sent back, as the VGG16 model's ProposalCreator
does for one image.
"""

import numpy

from cvzoo.core import backend
from cvzoo.models.detection import box_coding, detector
from cvzoo.utils import nms


def top_candidates(xp, locs, confs, level_anchors, n_pre_nms, limits):
    """Each level's ``n_pre_nms`` best anchors of every image, decoded and clipped.

    Args:
        xp: the array module.
        locs, confs: per level, Variables (B, K_l, 4) offsets and (B, K_l) scores.
        level_anchors: per level, (K_l, 4) anchors.
        n_pre_nms (int): how many of each level's best to keep.
        limits (array): (4,) or (B, 1, 4) upper bounds of (x_min, y_min, x_max, y_max).

    Returns:
        tuple: ``bbox`` (B, N, 4), ``score`` (B, N) raw scores, each level's columns by
        decreasing score, and the number of columns of each level.
    """
    bboxes, scores = [], []
    for loc, conf, anchor in zip(locs, confs, level_anchors):
        conf = conf.array
        top = xp.argsort(-conf, axis=1, kind='stable')[:, :n_pre_nms]
        offset = xp.take_along_axis(loc.array, top[:, :, None], axis=1)
        bbox = box_coding.decode(anchor[top], offset, exp_clip=box_coding.EXP_CLIP)
        bboxes.append(xp.clip(bbox, 0, limits))
        scores.append(xp.take_along_axis(conf, top, axis=1))
    return (xp.concatenate(bboxes, axis=1), xp.concatenate(scores, axis=1),
            [score.shape[1] for score in scores])


def fpn_proposals(bbox, score, valid, n_level_candidate, nms_thresh, n_post_nms,
                  n_level_post_nms=None):
    """RoIs of a batch: greedy NMS per image and level, then each image's best.

    Args:
        bbox (array): (B, N, 4) candidate boxes of each image, the columns grouped by
            level (``n_level_candidate[l]`` columns each).
        score (array): (B, N) their scores, each level's columns by decreasing score.
            They give the NMS's priority (ties: the earlier column first) and the order
            of the RoIs.
        valid (array): (B, N) bool, the candidates that take part (the others are
            dropped before the NMS).
        n_level_candidate (sequence of int): the columns of each level.
        nms_thresh (float): a candidate is dropped at IoU >= nms_thresh with a kept one
            of its image and level.
        n_post_nms (int): RoIs kept per image, the best first.
        n_level_post_nms (int or None): RoIs kept per image and level after its NMS.

    Returns:
        tuple: ``rois`` (R, 4) float32 and ``roi_indices`` (R,) int32 on ``bbox``'s
        device, sorted by image, then by decreasing score (ties: by level, then column).
    """
    host_bbox, host_score, valid = detector.to_host(bbox, score, valid)
    level = numpy.repeat(numpy.arange(len(n_level_candidate)), n_level_candidate)
    image_index, column = numpy.nonzero(valid)
    host_bbox, host_score = host_bbox[image_index, column], host_score[image_index, column]
    group = image_index * len(n_level_candidate) + level[column]
    # NOTE: the NMS visits the candidates by decreasing score, ties by position, i.e. by
    # column within a group: each group's own order, as one NMS per image and level.
    kept = nms.batched_non_maximum_suppression(host_bbox, host_score, group, nms_thresh)
    if n_level_post_nms is not None:
        kept = kept[_rank_in_group(group[kept]) < n_level_post_nms]
    kept = detector.best_per_image(kept, image_index[kept], n_post_nms)
    rois = host_bbox[kept].astype(numpy.float32, copy=False)
    return (backend.on_device_of(rois, bbox),
            backend.on_device_of(image_index[kept].astype(numpy.int32), bbox))


def _rank_in_group(group):
    """The rank of each entry among the entries of its group, in the given order."""
    order = numpy.argsort(group, kind='stable')
    sorted_group = group[order]
    rank = numpy.empty(len(group), numpy.int64)
    rank[order] = numpy.arange(len(group)) - numpy.searchsorted(sorted_group, sorted_group)
    return rank
