"""multibox_loss: SSD's localisation and confidence losses with hard negative mining."""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.core import variable as variable_module


def _hard_negative(xp, conf_loss, positive, k):
    """(B, K) bool: per image, the ``k * n_positive`` negatives of largest loss."""
    negative_loss = xp.where(positive, -xp.inf, conf_loss)
    rank = xp.argsort(xp.argsort(-negative_loss, axis=1, kind='stable'), axis=1)
    n_negative = k * positive.sum(axis=1, keepdims=True)
    return (rank < n_negative) & ~positive


def _check_shapes(mb_locs, mb_confs, gt_mb_locs, gt_mb_labels):
    B, K = gt_mb_labels.shape[:2] if gt_mb_labels.ndim == 2 else (None, None)
    if B is None:
        raise ValueError(f'gt_mb_labels: expected (B, K), got shape {gt_mb_labels.shape}')
    for name, value, shape in (('mb_locs', mb_locs, (B, K, 4)),
                               ('gt_mb_locs', gt_mb_locs, (B, K, 4))):
        if value.shape != shape:
            raise ValueError(f'{name}: expected shape {shape}, got {value.shape}')
    if mb_confs.ndim != 3 or mb_confs.shape[:2] != (B, K):
        raise ValueError(f'mb_confs: expected (B, K, n_class) with (B, K) = {(B, K)}, got '
                         f'{mb_confs.shape}')


def multibox_loss(mb_locs, mb_confs, gt_mb_locs, gt_mb_labels, k=3):
    """SSD's losses (Liu et al., "SSD", ECCV 2016, eq. 1-3 and section 2.2).

    ``loc_loss`` is the smooth L1 loss of the positive anchors' regressions;
    ``conf_loss`` the softmax cross entropy of the positive anchors and of the hard
    negatives: per image the ``k * n_positive`` background anchors whose loss is
    largest. Both are divided by the number of positives of the batch. Without a
    positive anchor both are 0 (still connected to the inputs, with zero gradients).

    Args:
        mb_locs (Variable or array): (B, K, 4) float predicted regressions.
        mb_confs (Variable or array): (B, K, n_class) float logits, background first.
        gt_mb_locs (array): (B, K, 4) float target regressions (MultiboxCoder.encode).
        gt_mb_labels (array): (B, K) int32 target classes, 0 for background.
        k (float): negatives per positive (3 in the paper).

    Returns:
        tuple of Variable: ``loc_loss`` and ``conf_loss``, 0-d of mb_locs' dtype.

    Raises:
        ValueError: shapes that do not fit one another.
    """
    mb_locs, mb_confs = variable_module.as_variable(mb_locs), variable_module.as_variable(
        mb_confs)
    gt_mb_locs = variable_module.as_array(gt_mb_locs)
    gt_mb_labels = variable_module.as_array(gt_mb_labels)
    _check_shapes(mb_locs, mb_confs, gt_mb_locs, gt_mb_labels)
    xp = backend.get_array_module(gt_mb_labels)
    positive = gt_mb_labels > 0
    dtype = mb_locs.dtype
    # 1 / the number of positives, kept on the device (no host sync: capture-safe); with
    # none, every term below is multiplied by 0 and both losses are 0 with zero gradients
    n_positive = xp.maximum(positive.sum(), 1)
    scale = (1.0 / n_positive).astype(dtype)
    loc_loss = F.sum(F.huber_loss(mb_locs, gt_mb_locs.astype(dtype, copy=False), 1.0,
                                  reduce='no'), axis=2)
    loc_loss = F.sum(loc_loss * positive.astype(dtype)) * scale
    B, K, n_class = mb_confs.shape
    conf_loss = F.softmax_cross_entropy(F.reshape(mb_confs, (B * K, n_class)),
                                        gt_mb_labels.reshape(-1).astype(numpy.int32),
                                        reduce='no')
    conf_loss = F.reshape(conf_loss, (B, K))
    selected = positive | _hard_negative(xp, conf_loss.array, positive, k)
    conf_loss = F.sum(conf_loss * selected.astype(dtype)) * scale
    return loc_loss, conf_loss
