"""SSDTrainChain: an SSD and its multibox loss, as the link an optimizer updates."""

import cvzoo.core.links as L
from cvzoo.core.training import reporter
from cvzoo.models.detection.ssd import multibox_loss


class SSDTrainChain(L.Chain):
    """Compute ``loss = alpha * loc_loss + conf_loss`` of a batch (Liu et al., eq. 1).

    Reports ``loss``, ``loss/loc`` and ``loss/conf`` through the training reporter.

    Args:
        model (SSD): the detector; its parameters are this chain's ``model/...``.
        alpha (float): weight of the localisation loss (1 in the paper).
        k (float): hard negatives per positive (3 in the paper).

    >>> import numpy
    >>> from cvzoo.models.detection.ssd.ssd_tiny import SSDTiny
    >>> model = SSDTiny(n_fg_class=3)
    >>> n_anchor = len(model.coder.default_bbox)
    >>> imgs = numpy.zeros((2, 3, model.insize, model.insize), numpy.float32)
    >>> gt_mb_locs = numpy.zeros((2, n_anchor, 4), numpy.float32)
    >>> gt_mb_labels = numpy.zeros((2, n_anchor), numpy.int32)
    >>> gt_mb_labels[:, 0] = 1  # one positive anchor (class 0) per image
    >>> loss = SSDTrainChain(model)(imgs, gt_mb_locs, gt_mb_labels)
    >>> loss.shape, bool(loss.array > 0)
    ((), True)
    """

    def __init__(self, model, alpha=1.0, k=3):
        super().__init__()
        with self.init_scope():
            self.model = model
        self.alpha, self.k = alpha, k

    def forward(self, imgs, gt_mb_locs, gt_mb_labels):
        """Loss of a batch.

        Args:
            imgs (array): (B, 3, insize, insize) float32, prepared (mean subtracted).
            gt_mb_locs (array): (B, K, 4) float32 targets from MultiboxCoder.encode of
                boxes in the model's box convention, as ``SSDTransform`` makes them
                (the chain takes them as they are).
            gt_mb_labels (array): (B, K) int32 targets, 0 for background.

        Returns:
            Variable: the 0-d loss.
        """
        mb_locs, mb_confs = self.model(imgs)
        loc_loss, conf_loss = multibox_loss.multibox_loss(
            mb_locs, mb_confs, gt_mb_locs, gt_mb_labels, self.k)
        loss = loc_loss * self.alpha + conf_loss
        reporter.report({'loss': loss, 'loss/loc': loc_loss, 'loss/conf': conf_loss}, self)
        return loss
