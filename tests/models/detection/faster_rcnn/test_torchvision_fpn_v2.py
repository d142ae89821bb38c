"""FasterRCNNResNet50FPNV2 (torchvision's Faster R-CNN v2): predict() contract, the v2
layers, torchvision v2 files (names, missing and unexpected keys, broken files), re-made
heads, devices, one training step (BN of the FPN and head trains, the ResNet's stays
frozen) and the zoo entry."""

import numpy
import pytest

import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.serializers import dictionary
from cvzoo.models import zoo
from cvzoo.models.detection.faster_rcnn import (
    torchvision_fpn,
    torchvision_fpn_v2,
    torchvision_train_chain,
)
from cvzoo.testing import assert_is_detection_model
from tests.helpers import pth_writer
from tests.models.detection.faster_rcnn import test_torchvision_fpn_weights as v1_weights

SMALL = {'min_size': 128, 'max_size': 192}
BN_LEAVES = ('weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked')


@pytest.fixture(scope='module')
def model():
    """One small-input model with 3 classes; its RPN keeps 50 proposals per image."""
    numpy.random.seed(0)
    model = torchvision_fpn_v2.FasterRCNNResNet50FPNV2(n_fg_class=3, **SMALL)
    model.rpn.n_test_post_nms = 50
    return model


def _imgs(rng, sizes):
    return [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in sizes]


def _bn_shapes(prefix, n, state):
    for leaf in BN_LEAVES:
        state[f'{prefix}.{leaf}'] = () if leaf == 'num_batches_tracked' else (n,)


def torchvision_v2_shapes():
    """name -> shape of torchvision's fasterrcnn_resnet50_fpn_v2 state_dict (91 classes;
    every BN with its num_batches_tracked)."""
    v1 = v1_weights.torchvision_shapes(new_names=True)
    state = {key: shape for key, shape in v1.items()
             if not key.startswith(('backbone.fpn.', 'rpn.head.conv', 'roi_heads.box_head.'))}
    for key in [k for k in state if k.endswith('.running_var')]:
        state[key.replace('running_var', 'num_batches_tracked')] = ()
    for i, n_in in enumerate((256, 512, 1024, 2048)):
        for kind, shape in (('inner_blocks', (256, n_in, 1, 1)),
                            ('layer_blocks', (256, 256, 3, 3))):
            state[f'backbone.fpn.{kind}.{i}.0.weight'] = shape
            _bn_shapes(f'backbone.fpn.{kind}.{i}.1', 256, state)
    for k in range(2):
        state[f'rpn.head.conv.{k}.0.weight'] = (256, 256, 3, 3)
        state[f'rpn.head.conv.{k}.0.bias'] = (256,)
    for k in range(4):
        state[f'roi_heads.box_head.{k}.0.weight'] = (256, 256, 3, 3)
        _bn_shapes(f'roi_heads.box_head.{k}.1', 256, state)
    state['roi_heads.box_head.5.weight'] = (1024, 256 * 7 * 7)
    state['roi_heads.box_head.5.bias'] = (1024,)
    return state


def random_state(shapes, rng):
    """Random arrays of ``shapes`` (positive variances, int64 counters)."""
    arrays = {}
    for key, shape in shapes.items():
        if key.endswith('num_batches_tracked'):
            arrays[key] = numpy.zeros(shape, numpy.int64)
        elif key.endswith('running_var'):
            arrays[key] = rng.uniform(0.5, 1.5, shape).astype(numpy.float32)
        else:
            arrays[key] = rng.standard_normal(shape, dtype=numpy.float32) * 0.01
    return arrays


@pytest.mark.parametrize('sizes', [[(100, 150)], [(100, 150), (90, 70), (64, 64)]],
                         ids=['batch_1', 'batch_3'])
def test_predict_contract(model, rng, sizes):
    model.use_preset('evaluate')
    try:
        assert_is_detection_model(model, _imgs(rng, sizes), 3)
    finally:
        model.use_preset('visualize')


def test_the_v2_layers(model):
    inner = model.extractor.inner[0]
    assert isinstance(inner, L.Conv2DBNActiv) and inner.conv.b is None
    assert inner.activ is None and inner.bn.eps == 1e-5
    assert model.extractor.outer[3].conv.W.shape == (256, 256, 3, 3)
    assert len(model.rpn.conv) == 2 and model.rpn.conv[1].W.shape == (256, 256, 3, 3)
    assert not hasattr(model.head, 'fc2') and model.head.fc1.W.shape == (1024, 256 * 49)
    for i in range(1, 5):
        conv = getattr(model.head, f'conv{i}')
        assert conv.conv.b is None and conv.bn.eps == 1e-5 and conv.activ is not None
    # torchvision's v2 ResNet has BatchNorm2d (eps 1e-5), also with its COCO weights
    assert model.extractor.base.res3.a.conv1.bn.eps == 1e-5
    assert torchvision_fpn_v2.FasterRCNNResNet50FPNV2.pretrained_bn_eps == 1e-5


def test_parameter_count_is_torchvisions():
    # torchvision's docs: FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1 num_params 43,712,278
    buffers = ('running_mean', 'running_var', 'num_batches_tracked')
    count = sum(int(numpy.prod(shape)) for key, shape in torchvision_v2_shapes().items()
                if not key.endswith(buffers))
    assert count == 43_712_278


def test_every_key_maps_once():
    model = torchvision_fpn_v2.FasterRCNNResNet50FPNV2()
    raw = {key: numpy.zeros(shape, numpy.float32)
           for key, shape in torchvision_v2_shapes().items()}
    arrays = model.convert_weights(raw, 'torchvision')
    assert set(arrays) == set(dictionary.state_arrays(model))
    assert arrays['head/loc/W'].shape == (364, 1024) and int(arrays['n_unused_class']) == 10


def test_wrong_file_names_every_missing_and_unexpected_key(tmp_path):
    shapes = torchvision_v2_shapes()
    # NOTE: names are checked before shapes, so one number per key is enough here
    arrays = {key: numpy.zeros(1, numpy.float32) for key in shapes
              if not key.startswith('roi_heads.box_head.2.')
              and key != 'backbone.fpn.layer_blocks.1.1.running_mean'}
    v1_only = {'rpn.head.conv.weight', 'roi_heads.box_head.fc6.weight',
               'backbone.fpn.inner_blocks.0.0.bias', 'roi_heads.box_head.4.weight'}
    arrays.update({key: numpy.zeros(1, numpy.float32) for key in v1_only})
    path = tmp_path / 'wrong_v2.pth'
    pth_writer.write_state_dict(path, arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        torchvision_fpn_v2.FasterRCNNResNet50FPNV2(pretrained_model=str(path))
    message = str(info.value)
    for key in v1_only | {'head/conv3/conv/W', 'head/conv3/bn/gamma',
                          'extractor/outer/1/bn/avg_mean'}:
        assert key in message
    assert 'head/conv2/conv/W' not in message and 'rpn/conv/0/W' not in message


def test_a_v1_file_is_refused_by_name(tmp_path):
    arrays = {key: numpy.zeros(1, numpy.float32) for key in v1_weights.torchvision_shapes()}
    path = tmp_path / 'fasterrcnn_v1.pth'
    pth_writer.write_state_dict(path, arrays)
    with pytest.raises(errors.WeightLoadError, match='roi_heads.box_head.fc7.weight'):
        torchvision_fpn_v2.FasterRCNNResNet50FPNV2(pretrained_model=str(path))


def test_a_broken_file_is_named(tmp_path):
    path = tmp_path / 'broken_v2.pth'
    path.write_bytes(b'PK\x03\x04 not a checkpoint')
    with pytest.raises(errors.CorruptFileError, match='broken_v2.pth'):
        torchvision_fpn_v2.FasterRCNNResNet50FPNV2(pretrained_model=str(path))


def test_other_n_fg_class_re_makes_only_the_predictor(model, rng):
    conv = model.head.conv2.conv.W.array.copy()
    model.reset_head(5)
    try:
        assert model.n_fg_class == 5 and model.head.conf.W.shape == (6, 1024)
        assert model.head.loc.b.shape == (24,)
        numpy.testing.assert_array_equal(model.head.conv2.conv.W.array, conv)
        model.use_preset('evaluate')
        assert_is_detection_model(model, _imgs(rng, [(70, 90)]), 5)
    finally:
        model.reset_head(3)
        model.use_preset('visualize')


def test_predict_on_the_device(device, rng):
    numpy.random.seed(1)
    model = torchvision_fpn_v2.FasterRCNNResNet50FPNV2(n_fg_class=2, min_size=64,
                                                       max_size=96)
    model.rpn.n_test_post_nms = 50
    model.use_preset('evaluate')
    imgs = _imgs(rng, [(50, 70)])
    expected = model.predict(imgs)
    model.to_device(device)
    bboxes, labels, scores = model.predict(imgs)
    assert isinstance(bboxes[0], numpy.ndarray) and len(labels[0]) > 0
    numpy.testing.assert_array_equal(labels[0], expected[1][0])
    numpy.testing.assert_allclose(scores[0], expected[2][0], rtol=1e-4, atol=1e-6)
    numpy.testing.assert_allclose(bboxes[0], expected[0][0], atol=1e-3)
    assert all(param.device == backend.get_device(device) for param in model.params())


def test_one_training_step_trains_the_fpn_and_head_bn_not_the_resnets(device, rng):
    numpy.random.seed(2)
    model = torchvision_fpn_v2.FasterRCNNResNet50FPNV2(n_fg_class=3, min_size=64,
                                                       max_size=96)
    model.rpn.n_train_pre_nms = model.rpn.n_train_post_nms = 100
    chain = torchvision_train_chain.FasterRCNNResNet50FPNTrainChain(model, roi_n_sample=64)
    chain.to_device(device)
    xp = chain.xp
    x = xp.asarray(rng.standard_normal((2, 3, 64, 96)).astype(numpy.float32))
    bboxes = [xp.asarray([[5, 5, 40, 50], [30, 20, 90, 60]], numpy.float32),
              xp.zeros((0, 4), numpy.float32)]
    labels = [xp.asarray([0, 2], numpy.int32), xp.zeros(0, numpy.int32)]
    bns = {'fpn': model.extractor.outer[0].bn, 'head': model.head.conv4.bn,
           'resnet': model.extractor.base.res4.a.conv1.bn}
    before = {name: backend.to_numpy(bn.avg_mean).copy() for name, bn in bns.items()}
    loss = chain(x, bboxes, labels, [(64, 96), (60, 80)])
    assert numpy.isfinite(float(loss.array))
    chain.cleargrads()
    loss.backward()
    for name in ('fpn', 'head'):
        assert not numpy.array_equal(backend.to_numpy(bns[name].avg_mean), before[name])
        grad = backend.to_numpy(bns[name].gamma.grad)
        assert numpy.isfinite(grad).all() and grad.any(), name
    numpy.testing.assert_array_equal(backend.to_numpy(bns['resnet'].avg_mean),
                                     before['resnet'])
    assert bns['resnet'].gamma.grad is None
    for path in ('extractor/inner/2/conv/W', 'rpn/conv/1/W', 'head/conv1/conv/W',
                 'head/fc1/W', 'extractor/base/res5/a/conv2/conv/W'):
        grad = backend.to_numpy(dict(model.namedparams())['/' + path].grad)
        assert grad.any(), path


def test_zoo_entry():
    entry = torchvision_fpn_v2.FasterRCNNResNet50FPNV2.weights['coco']
    assert zoo.schema_problems(entry) == []
    assert zoo.get_model_class('fasterrcnn_resnet50_fpn_v2') is \
        torchvision_fpn_v2.FasterRCNNResNet50FPNV2
    assert entry.url == ('https://download.pytorch.org/models/'
                         'fasterrcnn_resnet50_fpn_v2_coco-dd69338a.pth')
    assert entry.sha256 == 'dd69338a' and entry.n_class == len(entry.label_names) == 80
    assert entry.reported.value == pytest.approx(0.467)
    assert entry.reported.metric == 'map_coco' and entry.reported.dataset == 'coco_val2017'
    assert entry.license == 'BSD-3-Clause' and entry.box_convention == 'continuous'
    assert entry.preset == torchvision_fpn.FasterRCNNResNet50FPN.weights['coco'].preset


# NOTE: a 43.7M-parameter file is written, converted and loaded twice (4 to 8 s here)
def test_real_shape_file_loads_every_key(tmp_path, rng):
    arrays = random_state(torchvision_v2_shapes(), rng)
    path = tmp_path / 'fasterrcnn_v2.pth'
    pth_writer.write_state_dict(path, arrays)
    model = torchvision_fpn_v2.FasterRCNNResNet50FPNV2(pretrained_model=str(path))
    assert (model.n_fg_class, model.n_unused_class) == (80, 10)
    assert model.extractor.base.res2.a.conv1.bn.eps == 1e-5
    numpy.testing.assert_array_equal(model.extractor.inner[2].bn.avg_var,
                                     arrays['backbone.fpn.inner_blocks.2.1.running_var'])
    numpy.testing.assert_array_equal(model.head.conv4.conv.W.array,
                                     arrays['roi_heads.box_head.3.0.weight'])
    numpy.testing.assert_array_equal(model.rpn.conv[1].b.array,
                                     arrays['rpn.head.conv.1.0.bias'])
    other = torchvision_fpn_v2.FasterRCNNResNet50FPNV2(n_fg_class=7, pretrained_model=str(path))
    assert (other.n_fg_class, other.n_unused_class) == (7, 0)
    assert other.head.loc.W.shape == (32, 1024)
    numpy.testing.assert_array_equal(other.head.fc1.b.array, arrays['roi_heads.box_head.5.bias'])
