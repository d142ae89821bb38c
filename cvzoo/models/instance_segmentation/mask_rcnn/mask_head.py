"""MaskHead: Mask R-CNN's mask branch on an FPN (He et al., ICCV 2017, figure 4 right)."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.common import conv2d_activ
from cvzoo.models.detection.faster_rcnn.fpn import level_roi_align


class MaskHead(L.Chain, level_roi_align.LevelRoIAlign):
    """Per-class mask logits of RoIs on an FPN (ChainerCV's ``MaskHead``, its names).

    Each RoI is pooled from the level of its size by RoIAlign (14 x 14 bins, 2 x 2
    samples per bin, no half-pixel shift; see :class:`LevelRoIAlign`), then goes through
    ``conv1`` ... ``conv4`` (3 x 3, ``channels``: 256, ReLU), ``conv5`` (2 x 2
    deconvolution of stride 2, ReLU) and ``seg`` (1 x 1, one channel per class):
    (R, n_class, 28, 28) logits.

    Args:
        n_class (int): classes including the background.
        scales (tuple of float): feature pixels per input pixel of each level.
        in_channels (int): channels of the FPN's maps.
        bn_eps (float or None): None: ``conv1`` ... ``conv4`` are biased convolutions; a
            number: each is a convolution without bias, batch normalisation with this
            epsilon and ReLU (torchvision's ``MaskRCNNHeads(norm_layer=BatchNorm2d)``,
            Mask R-CNN v2).
    """

    roi_size = 14
    channels = 256

    def __init__(self, n_class, scales, in_channels=256, *, bn_eps=None):
        super().__init__()
        self.scales = tuple(scales)
        init = {'initialW': initializers.HeNormal(1, fan_option='fan_out')}
        with self.init_scope():
            C = self.channels
            for i, n_in in enumerate((in_channels, C, C, C), start=1):
                layer = conv2d_activ.Conv2DActiv(n_in, C, 3, 1, 1, **init) \
                    if bn_eps is None else L.Conv2DBNActiv(n_in, C, 3, 1, 1, **init,
                                                           bn_kwargs={'eps': bn_eps})
                setattr(self, f'conv{i}', layer)
            self.conv5 = L.Deconvolution2D(C, C, 2, stride=2, **init)
        self.reset_classes(n_class)

    @property
    def segm_size(self):
        """Side of the predicted masks (twice the pooled size)."""
        return 2 * self.roi_size

    def reset_classes(self, n_class):
        """(Re-)make ``seg`` (He normal, fan out) for ``n_class`` classes."""
        if hasattr(self, 'seg'):
            delattr(self, 'seg')
        self.n_class = n_class
        with self.init_scope():
            self.seg = L.Convolution2D(self.channels, n_class, 1,
                                       initialW=initializers.HeNormal(1, fan_option='fan_out'))

    def forward(self, hs, rois, roi_indices):
        """FPN maps and (R, 4) RoIs (input pixels) -> (R, n_class, 28, 28) mask logits,
        in the RoIs' order."""
        if len(rois) == 0:
            return self.xp.zeros((0, self.n_class, self.segm_size, self.segm_size),
                                 numpy.float32)
        h = self.pool(hs, rois, roi_indices)
        for i in range(1, 5):
            h = getattr(self, f'conv{i}')(h)
        h = F.relu(self.conv5(h))
        return self.seg(h)

    def probs(self, hs, rois, labels):
        """Per image, (R, M, M) float32 mask probabilities of the given classes.

        Args:
            hs (list of Variable): the FPN's maps of the batch.
            rois (list of numpy.ndarray): per image, (R, 4) boxes in input pixels.
            labels (list of numpy.ndarray): per image, (R,) labels in [0, n_class - 1)
                (the channel ``label + 1``: the background comes first).

        Returns:
            list of arrays on the head's device: the sigmoid of each RoI's channel.
        """
        xp = self.xp
        M = self.segm_size
        counts = [len(roi) for roi in rois]
        if sum(counts) == 0:
            return [xp.zeros((0, M, M), numpy.float32) for _ in rois]
        roi_indices = numpy.repeat(numpy.arange(len(rois), dtype=numpy.int32), counts)
        channel = numpy.concatenate(labels).astype(numpy.int32) + 1
        flat_rois, roi_indices, channel = (xp.asarray(array) for array in (
            numpy.concatenate(rois).astype(numpy.float32), roi_indices, channel))
        segm = self.forward(hs, flat_rois, roi_indices)
        segm = getattr(segm, 'array', segm)
        prob = F.sigmoid(segm[xp.arange(len(channel)), channel]).array
        return xp.split(prob, numpy.cumsum(counts)[:-1].tolist())

