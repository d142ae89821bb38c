"""KeypointRCNNTrainChain: torchvision's heatmap targets, one training step, the loss's
dependence on the points, argument errors."""

import numpy
import pytest

from cvzoo.core import backend, optimizers
from cvzoo.models.keypoint_detection import keypoint_rcnn, keypoint_rcnn_train_chain
from cvzoo.models.keypoint_detection.keypoint_rcnn_train_chain import keypoint_targets

N_POINT = 3


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)
    return keypoint_rcnn.KeypointRCNNResNet50FPN(n_point=N_POINT, min_size=64, max_size=96)


def _batch(model, seed=0):
    img = numpy.random.RandomState(seed).uniform(0, 255, (3, 48, 64)).astype(numpy.float32)
    prepared = model.prepare(img)
    H, W = prepared.shape[1:]
    bbox = numpy.array([[0.2 * W, 0.15 * H, 0.7 * W, 0.8 * H]], numpy.float32)
    point = numpy.array([[[0.3 * W, 0.3 * H], [0.5 * W, 0.6 * H], [0.9 * W, 0.5 * H]]],
                        numpy.float32)
    visible = numpy.array([[True, True, True]])
    return model.pad_batch([prepared]), [bbox], [numpy.zeros(1, numpy.int32)], [point], \
        [visible], [(H, W)]


def test_one_step_trains_the_keypoint_head(device):
    numpy.random.seed(1)  # a model of its own: the step changes it
    model = keypoint_rcnn.KeypointRCNNResNet50FPN(n_point=N_POINT, min_size=64, max_size=96)
    chain = keypoint_rcnn_train_chain.KeypointRCNNTrainChain(model, roi_n_sample=64)
    chain.to_device(device)
    x, bboxes, labels, points, visibles, sizes = _batch(model)
    x = backend.to_device(x, device)
    bboxes = [backend.to_device(bbox, device) for bbox in bboxes]
    labels = [backend.to_device(label, device) for label in labels]
    optimizer = optimizers.SGD(lr=0.01)
    optimizer.setup(chain)
    before = backend.to_numpy(model.keypoint_head.conv1.conv.W.array).copy()
    chain.cleargrads()
    loss = chain(x, bboxes, labels, points, visibles, sizes)
    loss.backward()
    optimizer.update()
    assert numpy.isfinite(float(backend.to_numpy(loss.array)))
    for link in (model.keypoint_head.deconv, model.keypoint_head.conv1.conv):
        assert link.W.grad is not None and numpy.abs(backend.to_numpy(link.W.grad)).max() > 0
    assert not numpy.array_equal(before,
                                 backend.to_numpy(model.keypoint_head.conv1.conv.W.array))


def test_the_keypoint_loss_is_the_cross_entropy_of_the_visible_points(model):
    chain = keypoint_rcnn_train_chain.KeypointRCNNTrainChain(model, roi_n_sample=64)
    x, bboxes, labels, points, visibles, sizes = _batch(model)
    numpy.random.seed(0)
    losses, samples = chain.box_losses(x, bboxes, labels, sizes)
    point, visible = points[0], visibles[0]
    loss = float(chain.keypoint_loss(samples, point, visible).array)
    assert 0 < loss < 2 * numpy.log(56 * 56)  # random logits: near log(3136)
    hidden = float(chain.keypoint_loss(samples, point, visible & False).array)
    assert hidden == 0  # no visible point: nothing to learn
    moved = point.copy()
    moved[0, 0] += 5
    assert float(chain.keypoint_loss(samples, moved, visible).array) != loss


@pytest.mark.parametrize('change, message', [
    (lambda b: b[:3] + ([b[3][0][:, :2]],) + b[4:], r'points\[0\]: expected \(1, 3, 2\)'),
    (lambda b: b[:4] + ([b[4][0][:, :2]],) + b[5:], r'visibles\[0\]: expected \(1, 3\)'),
    (lambda b: b[:3] + ([],) + b[4:], 'one entry per image'),
], ids=['points', 'visibles', 'images'])
def test_bad_points_are_named(model, change, message):
    chain = keypoint_rcnn_train_chain.KeypointRCNNTrainChain(model, roi_n_sample=64)
    with pytest.raises(ValueError, match=message):
        chain(*change(_batch(model)))


def test_targets_cells_edges_and_invisible_points():
    roi = numpy.array([[10, 20, 30, 60], [0, 0, 56, 56]], numpy.float32)
    point = numpy.array([[[10, 20], [30, 60], [29.9, 59.9], [9.9, 30]],
                         [[0.5, 55.5], [56, 10], [20, 20], [-1, 3]]], numpy.float32)
    visible = numpy.array([[True, True, True, True], [True, True, False, True]])
    target = keypoint_targets(point, visible, roi, 56)
    numpy.testing.assert_array_equal(target, [[0, 56 * 56 - 1, 55 * 56 + 55, -1],
                                              [55 * 56, 10 * 56 + 55, -1, -1]])


@pytest.mark.reference
def test_targets_are_torchvisions(torchvision, rng):
    import torch
    from torchvision.models.detection import roi_heads

    start, side = rng.uniform(0, 50, (30, 2)), rng.uniform(1, 80, (30, 2))
    roi = numpy.concatenate((start, start + side), axis=1).astype(numpy.float32)
    point = (start[:, None] + side[:, None] * rng.uniform(-0.1, 1.1, (30, 17, 2))).astype(
        numpy.float32)
    point[:3, :3] = roi[:3, None, 2:]  # on the far edges
    visible = rng.uniform(size=(30, 17)) > 0.2
    keypoints = torch.from_numpy(numpy.concatenate(
        (point, visible[..., None].astype(numpy.float32)), axis=-1))
    heatmaps, valid = roi_heads.keypoints_to_heatmap(keypoints, torch.from_numpy(roi), 56)
    expected = numpy.where(valid.numpy() > 0, heatmaps.numpy(), -1)
    numpy.testing.assert_array_equal(keypoint_targets(point, visible, roi, 56), expected)
    assert 0.5 < (expected >= 0).mean() < 0.8
