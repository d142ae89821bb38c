"""multibox_loss: values by hand, hard negative mining counts, no-positive case, errors."""

import numpy
import pytest

from cvzoo.core.variable import Variable
from cvzoo.models.detection.ssd import multibox_loss


def _softmax_cross_entropy(conf, label):
    shifted = conf - conf.max(axis=-1, keepdims=True)
    log_prob = shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))
    return -numpy.take_along_axis(log_prob, label[..., None], axis=-1)[..., 0]


def _huber(d):
    return numpy.where(numpy.abs(d) < 1, 0.5 * d * d, numpy.abs(d) - 0.5)


def _inputs(seed=0, B=2, K=40, n_class=4):
    rng = numpy.random.RandomState(seed)
    mb_locs = rng.randn(B, K, 4)
    mb_confs = rng.randn(B, K, n_class) * 2
    gt_mb_locs = rng.randn(B, K, 4)
    gt_mb_labels = numpy.zeros((B, K), numpy.int32)
    gt_mb_labels[0, [1, 5]] = [2, 3]
    gt_mb_labels[1, [7, 8, 9]] = [1, 1, 2]
    return mb_locs, mb_confs, gt_mb_locs, gt_mb_labels


def test_loss_by_hand():
    mb_locs, mb_confs, gt_mb_locs, gt_mb_labels = _inputs()
    loc_loss, conf_loss = multibox_loss.multibox_loss(
        mb_locs, mb_confs, gt_mb_locs, gt_mb_labels, k=3)
    positive = gt_mb_labels > 0
    expected_loc = _huber(mb_locs - gt_mb_locs).sum(axis=2)[positive].sum() / 5
    cross_entropy = _softmax_cross_entropy(mb_confs, gt_mb_labels)
    expected_conf = cross_entropy[positive].sum()
    for b in range(2):  # loop reference: the 3 * n_positive largest negative losses
        negative = numpy.sort(cross_entropy[b][~positive[b]])[::-1]
        expected_conf += negative[:3 * positive[b].sum()].sum()
    numpy.testing.assert_allclose(loc_loss.array, expected_loc, rtol=1e-10)
    numpy.testing.assert_allclose(conf_loss.array, expected_conf / 5, rtol=1e-10)
    assert loc_loss.shape == () and conf_loss.shape == ()


@pytest.mark.parametrize('k', [1, 3, 5], ids=['k1', 'k3', 'k5'])
def test_hard_negative_count_is_k_times_positives(k):
    _, mb_confs, _, gt_mb_labels = _inputs(seed=1)
    mb_confs = Variable(mb_confs)
    _, conf_loss = multibox_loss.multibox_loss(numpy.zeros(gt_mb_labels.shape + (4,)),
                                               mb_confs, numpy.zeros(gt_mb_labels.shape + (4,)),
                                               gt_mb_labels, k=k)
    conf_loss.backward()
    used = numpy.abs(mb_confs.grad).sum(axis=2) > 0
    positive = gt_mb_labels > 0
    assert (used & ~positive).sum(axis=1).tolist() == [2 * k, 3 * k]
    assert (used & positive).sum() == positive.sum()


def test_float32_stays_float32_and_gradients_flow():
    mb_locs, mb_confs, gt_mb_locs, gt_mb_labels = _inputs()
    mb_locs = Variable(mb_locs.astype(numpy.float32))
    mb_confs = Variable(mb_confs.astype(numpy.float32))
    loc_loss, conf_loss = multibox_loss.multibox_loss(
        mb_locs, mb_confs, gt_mb_locs.astype(numpy.float32), gt_mb_labels)
    loss = loc_loss + conf_loss
    assert loss.dtype == numpy.float32 and numpy.isfinite(loss.array)
    loss.backward()
    assert mb_locs.grad.dtype == numpy.float32
    assert numpy.abs(mb_locs.grad[gt_mb_labels == 0]).sum() == 0  # background: no loc loss
    assert numpy.abs(mb_locs.grad[gt_mb_labels > 0]).sum() > 0


def test_no_positive_gives_zero_connected_losses():
    mb_locs, mb_confs, gt_mb_locs, _ = _inputs()
    mb_locs = Variable(mb_locs)
    loc_loss, conf_loss = multibox_loss.multibox_loss(
        mb_locs, mb_confs, gt_mb_locs, numpy.zeros((2, 40), numpy.int32))
    assert float(loc_loss.array) == 0 and float(conf_loss.array) == 0
    (loc_loss + conf_loss).backward()
    assert mb_locs.grad is not None and not mb_locs.grad.any()


@pytest.mark.parametrize('change, name', [
    ({'mb_locs': numpy.zeros((2, 40, 3))}, 'mb_locs'),
    ({'gt_mb_locs': numpy.zeros((2, 39, 4))}, 'gt_mb_locs'),
    ({'mb_confs': numpy.zeros((2, 40))}, 'mb_confs'),
    ({'gt_mb_labels': numpy.zeros(80, numpy.int32)}, 'gt_mb_labels'),
], ids=['locs', 'gt_locs', 'confs', 'labels'])
def test_shape_errors_name_the_argument(change, name):
    mb_locs, mb_confs, gt_mb_locs, gt_mb_labels = _inputs()
    arguments = {'mb_locs': mb_locs, 'mb_confs': mb_confs, 'gt_mb_locs': gt_mb_locs,
                 'gt_mb_labels': gt_mb_labels}
    arguments.update(change)
    with pytest.raises(ValueError, match=name):
        multibox_loss.multibox_loss(**arguments)
