"""ProposalCreator: RPN outputs -> RoIs (Ren et al., NeurIPS 2015, section 3.1.2)."""

import numpy

from cvzoo.core import backend, config
from cvzoo.models.detection import box_coding, detector
from cvzoo.utils import nms


class ProposalCreator:
    """Decode the anchors' offsets, clip, drop small boxes, keep the best, suppress.

    Per image: boxes = loc2bbox(anchor, loc) clipped to the image; boxes narrower or
    lower than ``min_size * scale`` are dropped; the ``n_pre_nms`` best by score go
    through NMS at ``nms_thresh``, of which the ``n_post_nms`` best are the RoIs. The
    counts are the train ones under ``config.train`` and the test ones otherwise.

    Args:
        nms_thresh (float): IoU threshold of the NMS.
        n_train_pre_nms, n_train_post_nms (int): boxes before and after NMS in training.
        n_test_pre_nms, n_test_post_nms (int): the same at test time.
        min_size (float): smallest side kept, in original-image pixels.
    """

    def __init__(self, nms_thresh=0.7, n_train_pre_nms=12000, n_train_post_nms=2000,
                 n_test_pre_nms=6000, n_test_post_nms=300, min_size=16):
        if not 0 <= nms_thresh <= 1:
            raise ValueError(f'nms_thresh: expected a number in [0, 1], got {nms_thresh!r}')
        self.nms_thresh = nms_thresh
        self.n_train_pre_nms, self.n_train_post_nms = n_train_pre_nms, n_train_post_nms
        self.n_test_pre_nms, self.n_test_post_nms = n_test_pre_nms, n_test_post_nms
        self.min_size = min_size

    def __call__(self, loc, score, anchor, img_size, scale=1.0):
        """RoIs of one image.

        Args:
            loc (array): (K, 4) float32 offsets (dx, dy, dw, dh) of the anchors.
            score (array): (K,) float32 objectness of the anchors.
            anchor (array): (K, 4) float32 anchors (x_min, y_min, x_max, y_max).
            img_size (tuple of int): (H, W) of the network's input image.
            scale (float): input pixels per original-image pixel.

        Returns:
            array: (R, 4) float32 RoIs in input pixels, best score first, R <= n_post_nms.
        """
        if config.config.train:
            n_pre_nms, n_post_nms = self.n_train_pre_nms, self.n_train_post_nms
        else:
            n_pre_nms, n_post_nms = self.n_test_pre_nms, self.n_test_post_nms
        xp = backend.get_array_module(loc, score, anchor)
        H, W = img_size
        roi = box_coding.decode(anchor, loc)
        roi = xp.clip(roi, 0, xp.asarray([W, H, W, H], dtype=roi.dtype))
        size = roi[:, 2:] - roi[:, :2]
        large = (size >= self.min_size * scale).all(axis=1)
        # NOTE: the selection and the NMS run on the host, after one transfer: their
        # sizes depend on the data, and each would cost a host sync on a GPU
        host_roi, host_score, large = detector.to_host(roi, score, large)
        keep = numpy.nonzero(large)[0]
        host_roi, host_score = host_roi[keep], host_score[keep]
        order = numpy.argsort(-host_score, kind='stable')
        if n_pre_nms > 0:
            order = order[:n_pre_nms]
        host_roi = host_roi[order]
        kept = nms.non_maximum_suppression(host_roi, self.nms_thresh, limit=n_post_nms)
        return backend.on_device_of(host_roi[kept], roi)
