"""MaskRCNNTrainChain and TorchvisionMaskRCNNTrainChain: one step on a tiny image gives
finite losses and gradients to the mask head; the mask losses are ChainerCV's and
torchvision's on the samples; on the stand-in device too."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.core.training import reporter as reporter_module
from cvzoo.models.instance_segmentation.mask_rcnn import (
    mask_rcnn_fpn_resnet,
    mask_rcnn_train_chain,
    mask_targets,
    torchvision_mask_rcnn,
)
from cvzoo.testing import function_checks
from cvzoo.utils import bbox as bbox_utils


def _batch(model, seed=0):
    rng = numpy.random.RandomState(seed)
    img = rng.uniform(0, 255, (3, 48, 64)).astype(numpy.float32)
    prepared = model.prepare(img)
    H, W = prepared.shape[1:]
    bbox = numpy.array([[0.1 * W, 0.2 * H, 0.6 * W, 0.9 * H],
                        [0.5 * W, 0.1 * H, 0.95 * W, 0.5 * H]], numpy.float32)
    label = numpy.array([1, 0], numpy.int32)
    mask = numpy.zeros((2, H, W), bool)
    for i, (x_min, y_min, x_max, y_max) in enumerate(bbox.astype(int)):
        mask[i, y_min:y_max, x_min:(x_min + x_max) // 2] = True  # the box's left half
    return model.pad_batch([prepared]), [bbox], [label], [mask], [(H, W)]


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)
    return mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50(n_fg_class=3, min_size=64, max_size=96)


def _step(chain, arguments):
    chain.cleargrads()
    observation = {}
    reporter = reporter_module.Reporter()
    reporter.add_observer('main', chain)
    with reporter.scope(observation):
        loss = chain(*arguments)
    loss.backward()
    return loss, observation


def test_one_step_gives_finite_losses_and_mask_head_gradients(model):
    chain = mask_rcnn_train_chain.MaskRCNNTrainChain(model)
    loss, observation = _step(chain, _batch(model))
    names = ('rpn_loc', 'rpn_conf', 'head_loc', 'head_conf', 'mask')
    values = {name: float(backend.to_numpy(getattr(observation[f'main/loss/{name}'], 'array',
                                                   observation[f'main/loss/{name}'])))
              for name in names}
    assert all(numpy.isfinite(value) for value in values.values()), values
    assert values['mask'] > 0
    assert float(loss.array) == pytest.approx(sum(values.values()), rel=1e-5)
    for name, param in model.mask_head.namedparams():
        assert param.grad is not None and numpy.isfinite(param.grad).all(), name
        assert numpy.abs(param.grad).max() > 0, name


def test_mask_loss_is_the_sigmoid_cross_entropy_of_the_matched_targets(model):
    chain = mask_rcnn_train_chain.MaskRCNNTrainChain(model)
    x, bboxes, labels, masks, sizes = _batch(model, seed=1)
    numpy.random.seed(3)
    _, samples = chain.box_losses(x, bboxes, labels, sizes)
    fg = samples['gt_roi_label'] > 0
    assert fg.any()
    padded = numpy.zeros((2,) + x.shape[2:], bool)
    padded[:, :masks[0].shape[1], :masks[0].shape[2]] = masks[0]
    loss = chain.mask_loss(samples, padded)
    roi = samples['sample_roi'][fg]
    # each RoI's ground truth: the box it overlaps most, checked one RoI at a time
    best = []
    for one in roi:
        area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
        overlaps = []
        for gt in bboxes[0]:
            w = max(0, min(one[2], gt[2]) - max(one[0], gt[0]))
            h = max(0, min(one[3], gt[3]) - max(one[1], gt[1]))
            overlaps.append(w * h / (area(one) + area(gt) - w * h))
        best.append(int(numpy.argmax(overlaps)))
    target = mask_targets.mask_targets(padded, roi, numpy.array(best), 28)
    segm = model.mask_head(samples['hs'], roi, numpy.zeros(len(roi), numpy.int32)).array
    logit = segm[numpy.arange(len(roi)), samples['gt_roi_label'][fg]]
    expected = numpy.mean(numpy.logaddexp(0, logit) - logit * target)
    assert float(loss.array) == pytest.approx(float(expected), rel=1e-4)


def test_only_background_samples_keep_the_mask_head_in_the_graph(model):
    chain = mask_rcnn_train_chain.MaskRCNNTrainChain(model)
    x, bboxes, labels, masks, sizes = _batch(model)
    _, samples = chain.box_losses(x, bboxes, labels, sizes)
    samples['gt_roi_label'] = numpy.zeros_like(samples['gt_roi_label'])
    loss = chain.mask_loss(samples, numpy.zeros((2,) + x.shape[2:], bool))
    assert float(loss.array) == 0
    model.cleargrads()
    loss.backward()
    assert model.mask_head.seg.W.grad is not None


def test_masks_that_do_not_fit_are_named(model):
    chain = mask_rcnn_train_chain.MaskRCNNTrainChain(model)
    x, bboxes, labels, masks, sizes = _batch(model)
    with pytest.raises(ValueError, match=r'masks\[0\]'):
        chain(x, bboxes, labels, [masks[0][:1]], sizes)
    with pytest.raises(ValueError, match='masks'):
        chain(x, bboxes, labels, [], sizes)


def test_loss_on_the_device_carries_gradients(device):
    numpy.random.seed(0)
    model = mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50(n_fg_class=2, min_size=64, max_size=96)
    chain = mask_rcnn_train_chain.MaskRCNNTrainChain(model).to_device(device)
    x, bboxes, labels, masks, sizes = _batch(model)
    send = backend.get_device(device).send
    loss, _ = _step(chain, (send(x), [send(bboxes[0])], [send(labels[0])], masks, sizes))
    assert backend.get_device_from_array(loss.array) == backend.get_device(device)
    assert numpy.isfinite(backend.to_numpy(loss.array))
    grad = model.mask_head.conv1.conv.W.grad
    assert backend.get_device_from_array(grad) == backend.get_device(device)
    assert numpy.abs(backend.to_numpy(grad)).max() > 0


# --- torchvision's Mask R-CNN: its train chain ---------------------------------------

@pytest.fixture(scope='module')
def torchvision_model():
    numpy.random.seed(0)
    return torchvision_mask_rcnn.MaskRCNNResNet50FPN(n_fg_class=3, min_size=64, max_size=96)


def test_torchvision_step_gives_finite_losses_and_mask_head_gradients(torchvision_model):
    chain = mask_rcnn_train_chain.TorchvisionMaskRCNNTrainChain(torchvision_model,
                                                                roi_n_sample=64)
    loss, observation = _step(chain, _batch(torchvision_model))
    values = {name: float(backend.to_numpy(getattr(value, 'array', value)))
              for name, value in observation.items() if name.startswith('main/loss/')}
    assert sorted(values) == sorted(f'main/loss/{name}' for name in (
        'rpn_loc', 'rpn_conf', 'head_loc', 'head_conf', 'mask'))
    assert all(numpy.isfinite(value) for value in values.values()), values
    assert values['main/loss/mask'] > 0
    for name, param in torchvision_model.mask_head.namedparams():
        assert param.grad is not None and numpy.abs(param.grad).max() > 0, name


def test_torchvision_mask_loss_is_bce_with_roi_align_targets(torchvision_model):
    chain = mask_rcnn_train_chain.TorchvisionMaskRCNNTrainChain(torchvision_model,
                                                                roi_n_sample=64)
    x, bboxes, labels, masks, sizes = _batch(torchvision_model, seed=2)
    _, samples = chain.box_losses(x, bboxes, labels, sizes)
    fg = samples['gt_roi_label'] > 0
    padded = numpy.zeros((2,) + x.shape[2:], bool)
    padded[:, :masks[0].shape[1], :masks[0].shape[2]] = masks[0]
    loss = float(chain.mask_loss(samples, padded).array)
    roi = samples['sample_roi'][fg]
    gt_index = numpy.array([int(numpy.argmax(bbox_utils.bbox_iou(r[None], bboxes[0])))
                            for r in roi])
    target = F.roi_align_2d(padded[:, None].astype(numpy.float32), roi,
                            gt_index.astype(numpy.int32), 28, 1.0, None).array[:, 0]
    assert 0 < target.mean() < 1 and ((target > 0) & (target < 1)).any()  # soft targets
    segm = torchvision_model.mask_head(samples['hs'], roi,
                                       numpy.zeros(len(roi), numpy.int32)).array
    x_ = segm[numpy.arange(len(roi)), samples['gt_roi_label'][fg]].astype(numpy.float64)
    expected = numpy.mean(numpy.logaddexp(0, x_) - x_ * target)
    assert loss == pytest.approx(expected, rel=1e-4)


def test_soft_sigmoid_cross_entropy(device):
    rng = numpy.random.RandomState(0)
    x = rng.uniform(-4, 4, (3, 5)).astype(numpy.float32)
    t = rng.uniform(0, 1, (3, 5)).astype(numpy.float32)
    function_checks.check_function(
        lambda x, t: mask_rcnn_train_chain.soft_sigmoid_cross_entropy(x, t), (x, t),
        lambda x, t: numpy.logaddexp(0, x) - x * t, devices=[device])
