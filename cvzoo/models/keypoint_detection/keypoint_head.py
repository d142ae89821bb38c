"""KeypointHead: the keypoint branch of Keypoint R-CNN on an FPN (He et al., ICCV 2017,
section 5), as torchvision's ``KeypointRCNNHeads`` and ``KeypointRCNNPredictor``."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.common import conv2d_activ
from cvzoo.models.detection.faster_rcnn import torchvision_box_head


class KeypointHead(torchvision_box_head.TorchvisionLevelMapper, L.Chain):
    """Keypoint heatmap logits of RoIs on an FPN.

    Each RoI is pooled from the level torchvision's ``LevelMapper`` gives it
    (:class:`TorchvisionLevelMapper`) by RoIAlign (14 x 14 bins, 2 x 2 samples per bin, no
    half-pixel shift), then goes through ``conv1`` ... ``conv8`` (3 x 3, 512, ReLU),
    ``deconv`` (4 x 4 deconvolution of stride 2 and pad 1, one channel per point:
    torchvision's ``kps_score_lowres``) and a bilinear upsampling by 2
    (``align_corners=False``): (R, n_point, 56, 56) logits. Weights start as
    torchvision's (He normal, fan out; zero biases).

    Args:
        n_point (int): keypoints per instance.
        scales (tuple of float): feature pixels per input pixel of the FPN's levels
            (P2 ... P6; the last is not pooled from).
        in_channels (int): channels of the FPN's maps.
    """

    roi_size = 14
    n_layer = 8
    channels = 512

    def __init__(self, n_point, scales, in_channels=256):
        super().__init__()
        self.scales = tuple(scales)
        init = {'initialW': initializers.HeNormal(1, fan_option='fan_out')}
        with self.init_scope():
            for i in range(1, self.n_layer + 1):
                setattr(self, f'conv{i}', conv2d_activ.Conv2DActiv(
                    in_channels if i == 1 else self.channels, self.channels, 3, 1, 1, **init))
        self.reset_points(n_point)

    @property
    def heatmap_size(self):
        """Side of the heatmaps (four times the pooled size)."""
        return 4 * self.roi_size

    def reset_points(self, n_point):
        """(Re-)make ``deconv`` (He normal, fan out) for ``n_point`` keypoints."""
        if hasattr(self, 'deconv'):
            delattr(self, 'deconv')
        self.n_point = n_point
        with self.init_scope():
            self.deconv = L.Deconvolution2D(
                self.channels, n_point, 4, stride=2, pad=1,
                initialW=initializers.HeNormal(1, fan_option='fan_out'))

    def forward(self, hs, rois, roi_indices):
        """FPN maps and (R, 4) RoIs (input pixels) with their (R,) images ->
        (R, n_point, 56, 56) heatmap logits, in the RoIs' order."""
        if len(rois) == 0:
            return self.xp.zeros((0, self.n_point, self.heatmap_size, self.heatmap_size),
                                 numpy.float32)
        h = self.pool(hs, rois, roi_indices)
        for i in range(1, self.n_layer + 1):
            h = getattr(self, f'conv{i}')(h)
        h = self.deconv(h)
        return F.resize_images(h, (2 * h.shape[2], 2 * h.shape[3]), align_corners=False)
