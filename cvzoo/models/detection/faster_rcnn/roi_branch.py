"""What the RoI branches after an R-CNN's box head share in training (Mask R-CNN's mask
head, Keypoint R-CNN's keypoint head): the box head's foreground samples and the
ground-truth instance each of them is matched to (He et al., ICCV 2017, section 3)."""

import numpy

from cvzoo.utils import bbox as bbox_utils


def foreground_samples(samples):
    """The foreground RoIs among the box head's samples, on the host.

    Args:
        samples (dict): what a box train chain's ``box_losses`` returns second
            (``sample_roi``, ``sample_index``, ``gt_roi_label``: 0 background, else
            label + 1).

    Returns:
        tuple: ``roi`` (F, 4) float32, ``roi_index`` (F,) int32 (the image of each) and
        ``gt_label`` (F,) int32 (label + 1).
    """
    fg = samples['gt_roi_label'] > 0
    return (samples['sample_roi'][fg].astype(numpy.float32, copy=False),
            samples['sample_index'][fg].astype(numpy.int32),
            samples['gt_roi_label'][fg].astype(numpy.int32))


def best_ground_truth(roi, roi_index, bboxes):
    """(R,) index, among all images' boxes in order, of each RoI's best box of its image.

    >>> best_ground_truth(numpy.array([[0, 0, 4, 4], [0, 0, 4, 4]], numpy.float32),
    ...                   numpy.array([0, 1]),
    ...                   [numpy.array([[0, 0, 4, 4]], numpy.float32),
    ...                    numpy.array([[9, 9, 12, 12], [0, 0, 3, 4]], numpy.float32)])
    array([0, 2])
    """
    counts = [len(bbox) for bbox in bboxes]
    gt_image = numpy.repeat(numpy.arange(len(bboxes)), counts)
    iou = bbox_utils.bbox_iou(roi, numpy.concatenate(bboxes))
    iou[roi_index[:, None] != gt_image[None, :]] = -1
    return iou.argmax(axis=1)
