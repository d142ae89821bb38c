"""FCISResNet101Head: FCIS's position-sensitive inside/outside scores and box offsets."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.detection import box_coding, detector


class FCISResNet101Head(L.Chain):
    """Position-sensitive score maps pooled per RoI (Li et al., "Fully Convolutional
    Instance-aware Semantic Segmentation", CVPR 2017), ChainerCV's layout.

    ``conv1`` (1x1, 2048 -> 1024, ReLU) feeds two 1x1 convolutions: ``cls_seg`` with
    ``g * g * n_class * 2`` channels (per class an outside and an inside score map per
    position group) and ``ag_loc`` with ``g * g * 2 * 4`` (class-agnostic offsets, for
    the background and the foreground). Each RoI pools them with
    :func:`~cvzoo.core.functions.ps_roi_average_pooling_2d` into ``roi_size`` bins; a
    class scores the mean over the bins of the larger of its two maps, the offsets are
    the mean of their bins, and the RoI's mask scores are its best class's two maps.
    With ``iter2`` the foreground offsets move each RoI (clipped to the image) and the
    moved RoIs are pooled once more; the outputs of both passes are concatenated.

    ``ag_loc``'s offsets are cvzoo's (dx, dy, dw, dh) (ChainerCV's files hold y first;
    the model's conversion permutes them).

    Args:
        n_class (int): classes including the background.
        roi_size (int): bins per side of a pooled RoI (21).
        group_size (int): position groups per side (7).
        spatial_scale (float): feature pixels per input pixel (1 / 16).
        loc_normalize_mean, loc_normalize_std (tuple of float): offsets are
            ``loc * std + mean``.
        iter2 (bool): pool a second time at the moved RoIs.
        initialW: initializer of the convolutions (default N(0, 0.01)).
    """

    def __init__(self, n_class, roi_size=21, group_size=7, spatial_scale=1 / 16, *,
                 loc_normalize_mean=(0.0, 0.0, 0.0, 0.0),
                 loc_normalize_std=(0.2, 0.2, 0.5, 0.5), iter2=True, initialW=None):
        super().__init__()
        self.roi_size, self.group_size = roi_size, group_size
        self.spatial_scale = spatial_scale
        self.loc_normalize_mean = tuple(loc_normalize_mean)
        self.loc_normalize_std = tuple(loc_normalize_std)
        self.iter2 = iter2
        self.initialW = initialW or initializers.Normal(0.01)
        with self.init_scope():
            self.conv1 = L.Convolution2D(2048, 1024, 1, 1, 0, initialW=self.initialW)
            self.ag_loc = L.Convolution2D(1024, group_size * group_size * 2 * 4, 1, 1, 0,
                                          initialW=self.initialW)
        self.reset_classes(n_class)

    def reset_classes(self, n_class):
        """(Re-)make ``cls_seg`` for ``n_class`` classes (background included)."""
        if hasattr(self, 'cls_seg'):
            delattr(self, 'cls_seg')
        self.n_class = n_class
        with self.init_scope():
            self.cls_seg = L.Convolution2D(1024, self.group_size ** 2 * n_class * 2, 1, 1,
                                           0, initialW=self.initialW)

    def forward(self, x, rois, roi_indices, img_size, gt_roi_labels=None):
        """Scores and offsets of each RoI (of both passes with ``iter2``).

        Args:
            x (Variable): (B, 2048, H, W) res5 features.
            rois (array): (R, 4) float32 RoIs (x_min, y_min, x_max, y_max), input pixels.
            roi_indices (array): (R,) int32 batch index of each RoI.
            img_size (tuple of int): (H, W) of the input.
            gt_roi_labels (array or None): (R,) int labels (0: background) whose mask
                scores are returned instead of the best class's (training); the second
                pass is then skipped.

        Returns:
            tuple: ``roi_ag_seg_scores`` (R', 2, roi_size, roi_size) (outside, inside),
            ``roi_ag_locs`` (R', 2, 4) and ``roi_cls_scores`` (R', n_class) Variables,
            ``rois`` (R', 4) and ``roi_indices`` (R',) arrays; R' = 2 R with ``iter2``.
        """
        h = F.relu(self.conv1(x))
        h_cls_seg, h_ag_loc = self.cls_seg(h), self.ag_loc(h)
        # NOTE: the range of roi_indices is read once for the pooling calls of both passes
        index_range = tuple(int(bound) for bound in detector.to_host(
            self.xp.stack((roi_indices.min(), roi_indices.max())))[0]) \
            if len(roi_indices) else None
        seg_scores, locs, cls_scores = self._pool(h_cls_seg, h_ag_loc, rois, roi_indices,
                                                  index_range, gt_roi_labels)
        if not self.iter2 or gt_roi_labels is not None:
            return seg_scores, locs, cls_scores, rois, roi_indices
        xp = self.xp
        std = xp.asarray(self.loc_normalize_std, numpy.float32)
        mean = xp.asarray(self.loc_normalize_mean, numpy.float32)
        rois2 = box_coding.decode(rois, locs.array[:, 1] * std + mean)
        H, W = img_size
        rois2 = xp.clip(rois2, 0, xp.asarray([W, H, W, H], numpy.float32))
        seg_scores2, locs2, cls_scores2 = self._pool(h_cls_seg, h_ag_loc, rois2,
                                                     roi_indices, index_range)
        return (F.concat((seg_scores, seg_scores2), axis=0),
                F.concat((locs, locs2), axis=0),
                F.concat((cls_scores, cls_scores2), axis=0),
                xp.concatenate((rois, rois2)), xp.concatenate((roi_indices, roi_indices)))

    def _pool(self, h_cls_seg, h_ag_loc, rois, roi_indices, index_range, labels=None):
        size, n_class = self.roi_size, self.n_class
        pool = {'spatial_scale': self.spatial_scale, 'group_size': self.group_size,
                'index_range': index_range}
        cls_seg = F.ps_roi_average_pooling_2d(h_cls_seg, rois, roi_indices,
                                              (n_class * 2, size, size), **pool)
        cls_seg = F.reshape(cls_seg, (-1, n_class, 2, size, size))
        ag_loc = F.ps_roi_average_pooling_2d(h_ag_loc, rois, roi_indices, (8, size, size),
                                             **pool)
        cls_scores = F.mean(F.max(cls_seg, axis=2), axis=(2, 3))
        locs = F.reshape(F.mean(ag_loc, axis=(2, 3)), (-1, 2, 4))
        if labels is None:
            labels = cls_scores.array.argmax(axis=1)
        seg_scores = F.get_item(cls_seg, (self.xp.arange(len(labels)), labels))
        return seg_scores, locs, cls_scores


def swap_ag_loc_channels(array, group_size):
    """Permute ``ag_loc``'s (2 * 4 * g * g, ...) channels between ChainerCV's (dy, dx, dh,
    dw) and cvzoo's (dx, dy, dw, dh) order (its own inverse).

    >>> swap_ag_loc_channels(numpy.arange(8), 1).tolist()
    [1, 0, 3, 2, 5, 4, 7, 6]
    """
    grouped = numpy.asarray(array).reshape((2, 4, group_size ** 2) + array.shape[1:])
    return numpy.ascontiguousarray(grouped[:, [1, 0, 3, 2]]).reshape(array.shape)
