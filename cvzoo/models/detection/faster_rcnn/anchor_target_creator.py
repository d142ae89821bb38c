"""AnchorTargetCreator: the RPN's training targets (Ren et al., NeurIPS 2015, 3.1.2-3.1.3)."""

import numpy

from cvzoo.core import backend
from cvzoo.models.detection import box_coding
from cvzoo.utils import bbox as bbox_utils


def subsample(xp, label, value, n_keep):
    """Set all but a random ``n_keep`` of the entries equal to ``value`` to -1 (in place)."""
    index = xp.nonzero(label == value)[0]
    if len(index) > n_keep:
        drop = index[xp.random.permutation(len(index))[:len(index) - n_keep]]
        label[drop] = -1


class AnchorTargetCreator:
    """Label each anchor fg (1), bg (0) or ignored (-1) and give its offset target.

    Only anchors lying fully inside the image take part. An anchor is fg when its best
    IoU with a ground-truth box is >= ``pos_iou_thresh`` or when it is a ground-truth
    box's best anchor (ties included); bg when its best IoU is < ``neg_iou_thresh``.
    At most ``n_sample * pos_ratio`` fg and ``n_sample`` in all are kept, at random.

    Args:
        n_sample (int): labelled anchors per image.
        pos_iou_thresh, neg_iou_thresh (float): the IoU thresholds.
        pos_ratio (float): largest fraction of fg among the samples.
    """

    def __init__(self, n_sample=256, pos_iou_thresh=0.7, neg_iou_thresh=0.3, pos_ratio=0.5):
        self.n_sample = n_sample
        self.pos_iou_thresh, self.neg_iou_thresh = pos_iou_thresh, neg_iou_thresh
        self.pos_ratio = pos_ratio

    def __call__(self, bbox, anchor, img_size):
        """Targets of one image.

        Args:
            bbox (array): (R, 4) float32 ground-truth boxes, x first, input pixels.
            anchor (array): (K, 4) float32 anchors.
            img_size (tuple of int): (H, W) of the input.

        Returns:
            tuple: ``loc`` (K, 4) float32 offsets (dx, dy, dw, dh) to each anchor's best
            box (0 for anchors outside) and ``label`` (K,) int32 in {-1, 0, 1}.
        """
        xp = backend.get_array_module(bbox, anchor)
        H, W = img_size
        inside = xp.nonzero((anchor[:, 0] >= 0) & (anchor[:, 1] >= 0)
                            & (anchor[:, 2] <= W) & (anchor[:, 3] <= H))[0]
        label = xp.full(len(anchor), -1, dtype=numpy.int32)
        loc = xp.zeros((len(anchor), 4), dtype=numpy.float32)
        if len(inside) == 0:
            return loc, label
        inside_anchor = anchor[inside]
        inside_label = xp.full(len(inside), -1, dtype=numpy.int32)
        if len(bbox) == 0:
            inside_label[:] = 0
        else:
            iou = bbox_utils.bbox_iou(inside_anchor, bbox)
            argmax = iou.argmax(axis=1)
            max_iou = iou[xp.arange(len(inside)), argmax]
            gt_best = xp.nonzero((iou == iou.max(axis=0)).any(axis=1))[0]
            inside_label[max_iou < self.neg_iou_thresh] = 0
            inside_label[gt_best] = 1
            inside_label[max_iou >= self.pos_iou_thresh] = 1
            loc[inside] = box_coding.encode(
                inside_anchor, bbox[argmax], eps=box_coding.DTYPE_EPS).astype(numpy.float32)
        subsample(xp, inside_label, 1, int(self.pos_ratio * self.n_sample))
        subsample(xp, inside_label, 0, self.n_sample - int((inside_label == 1).sum()))
        label[inside] = inside_label
        return loc, label
