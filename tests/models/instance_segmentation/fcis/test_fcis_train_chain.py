"""FCISTrainChain: mask targets against a per-RoI reference; the losses of one step."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.core.training import reporter as reporter_module
from cvzoo.models.instance_segmentation.fcis import fcis_resnet101, fcis_train_chain
from tests.helpers import opencv_resize



def test_mask_targets_equal_a_cut_and_resize_per_roi(rng):
    gt = rng.uniform(0, 1, (2, 30, 40)) > 0.4
    rois = numpy.array([[0, 0, 40, 30], [3.4, 5.6, 20.5, 12.2], [10, 2, 13, 29.7],
                        [38.2, 20, 40, 30]], numpy.float32)
    index = numpy.array([0, 1, 1, 0])
    got = fcis_train_chain.mask_targets(gt, rois, index, 7)
    assert got.dtype == numpy.int32 and got.shape == (4, 7, 7)
    for roi, i, target in zip(rois, index, got):
        x0, y0, x1, y1 = numpy.round(roi).astype(int)
        cut = gt[i, y0:y1, x0:x1].astype(numpy.float32)
        numpy.testing.assert_array_equal(target, opencv_resize.resize(cut, 7, 7) >= 0.4)


@pytest.fixture(scope='module')
def small_fcis():
    numpy.random.seed(0)
    return fcis_resnet101.FCISResNet101(n_fg_class=2, min_size=64, max_size=96)


def _batch(model):
    img = numpy.random.RandomState(0).uniform(0, 255, (3, 48, 64)).astype(numpy.float32)
    x = model.prepare(img)[None]
    H, W = x.shape[2:]
    bbox = numpy.array([[0.2 * W, 0.15 * H, 0.7 * W, 0.8 * H]], numpy.float32)
    mask = numpy.zeros((1, H, W), bool)
    mask[0, int(0.3 * H):int(0.7 * H), int(0.25 * W):int(0.65 * W)] = True
    return x, [bbox], [numpy.array([1], numpy.int32)], [mask], [x.shape[3] / img.shape[2]]


def test_one_step_reports_finite_losses(small_fcis, device):
    model = small_fcis.to_device(device)
    chain = fcis_train_chain.FCISTrainChain(model)
    x, bboxes, labels, masks, scales = _batch(model)
    observer = reporter_module.Reporter()
    observer.add_observer('main', chain)
    numpy.random.seed(1)
    observation = {}
    with observer.scope(observation):
        chain.cleargrads()
        loss = chain(backend.to_device(x, device), bboxes, labels, masks, scales)
        loss.backward()
    names = ('rpn_loc', 'rpn_cls', 'roi_loc', 'roi_cls', 'roi_mask')
    values = {name: float(backend.to_numpy(observation[f'main/loss/{name}']))
              for name in names}
    assert all(numpy.isfinite(v) for v in values.values()), values
    assert values['roi_mask'] > 0 and values['roi_cls'] > 0
    assert model.head.cls_seg.W.grad is not None
    assert backend.to_numpy(model.head.cls_seg.W.grad).any()
    assert model.extractor.res2.a.conv1.conv.W.grad is None  # fixed below res3
    assert backend.to_numpy(model.extractor.res3.a.conv1.conv.W.grad).any()
    model.to_device('cpu')


def test_one_image_at_a_time(small_fcis):
    chain = fcis_train_chain.FCISTrainChain(small_fcis.to_device('cpu'))
    x, bboxes, labels, masks, scales = _batch(small_fcis)
    with pytest.raises(ValueError, match='one image at a time'):
        chain(numpy.concatenate([x, x]), bboxes * 2, labels * 2, masks * 2, scales * 2)
    with pytest.raises(ValueError, match='masks'):
        chain(x, bboxes, labels, [masks[0][:, :-1]], scales)


def test_host_syncs_per_step(small_fcis, stand_in):
    # the RPN's proposals, the RoI index range of the head, the targets' inputs
    model = small_fcis.to_device('cuda:0')
    chain = fcis_train_chain.FCISTrainChain(model)
    x, bboxes, labels, masks, scales = _batch(model)
    x = backend.to_device(x, 'cuda:0')
    chain(x, bboxes, labels, masks, scales)
    with stand_in.count_syncs() as syncs:
        loss = chain(x, bboxes, labels, masks, scales)
        loss.backward()
    assert sum(syncs.values()) <= 3, syncs
    model.to_device('cpu')
