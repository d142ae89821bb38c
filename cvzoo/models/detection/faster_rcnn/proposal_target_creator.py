"""ProposalTargetCreator: the RoI head's training samples (Girshick, Fast R-CNN, 2.3)."""

import numpy

from cvzoo.core import backend
from cvzoo.models.detection import box_coding
from cvzoo.utils import bbox as bbox_utils


class ProposalTargetCreator:
    """Sample RoIs (and the ground-truth boxes themselves) and give their targets.

    A RoI whose best IoU with a ground-truth box is >= ``pos_iou_thresh`` is fg, with
    that box's label + 1; one in [``neg_iou_thresh_lo``, ``neg_iou_thresh_hi``) is bg
    (label 0). At most ``round(n_sample * pos_ratio)`` fg are drawn at random, then bg
    up to ``n_sample``.

    Args:
        n_sample (int): RoIs per image.
        pos_ratio (float): largest fraction of fg.
        pos_iou_thresh, neg_iou_thresh_hi, neg_iou_thresh_lo (float): IoU thresholds.
    """

    def __init__(self, n_sample=128, pos_ratio=0.25, pos_iou_thresh=0.5,
                 neg_iou_thresh_hi=0.5, neg_iou_thresh_lo=0.0):
        self.n_sample, self.pos_ratio = n_sample, pos_ratio
        self.pos_iou_thresh = pos_iou_thresh
        self.neg_iou_thresh_hi, self.neg_iou_thresh_lo = neg_iou_thresh_hi, neg_iou_thresh_lo

    def __call__(self, roi, bbox, label, loc_normalize_mean=(0.0, 0.0, 0.0, 0.0),
                 loc_normalize_std=(0.1, 0.1, 0.2, 0.2)):
        """Samples of one image.

        Args:
            roi (array): (R, 4) float32 proposals, x first.
            bbox (array): (G, 4) float32 ground-truth boxes, G >= 1.
            label (array): (G,) int32 ground-truth labels in [0, n_fg_class).
            loc_normalize_mean, loc_normalize_std: the targets are
                ``(bbox2loc(roi, box) - mean) / std``.

        Returns:
            tuple: ``sample_roi`` (S, 4) float32, ``gt_roi_loc`` (S, 4) float32 and
            ``gt_roi_label`` (S,) int32 (0 background), fg first; S <= n_sample.
        """
        xp = backend.get_array_module(roi, bbox)
        if len(bbox) == 0:
            raise ValueError('bbox: expected at least one ground-truth box, got none')
        roi = xp.concatenate((roi, bbox.astype(roi.dtype)), axis=0)
        iou = bbox_utils.bbox_iou(roi, bbox)
        gt_assignment = iou.argmax(axis=1)
        max_iou = iou.max(axis=1)
        pos_index = xp.nonzero(max_iou >= self.pos_iou_thresh)[0]
        n_pos = min(round(self.n_sample * self.pos_ratio), len(pos_index))
        pos_index = pos_index[xp.random.permutation(len(pos_index))[:n_pos]]
        neg_index = xp.nonzero((max_iou < self.neg_iou_thresh_hi)
                               & (max_iou >= self.neg_iou_thresh_lo))[0]
        n_neg = min(self.n_sample - n_pos, len(neg_index))
        neg_index = neg_index[xp.random.permutation(len(neg_index))[:n_neg]]
        keep = xp.concatenate((pos_index, neg_index))
        gt_roi_label = (label[gt_assignment[keep]] + 1).astype(numpy.int32)
        gt_roi_label[n_pos:] = 0
        sample_roi = roi[keep].astype(numpy.float32, copy=False)
        gt_roi_loc = box_coding.encode(sample_roi, bbox[gt_assignment[keep]],
                                       eps=box_coding.DTYPE_EPS)
        mean = xp.asarray(loc_normalize_mean, numpy.float32)
        std = xp.asarray(loc_normalize_std, numpy.float32)
        gt_roi_loc = ((gt_roi_loc - mean) / std).astype(numpy.float32)
        return sample_roi, gt_roi_loc, gt_roi_label
