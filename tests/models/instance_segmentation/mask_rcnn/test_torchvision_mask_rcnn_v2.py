"""MaskRCNNResNet50FPNV2 (torchvision's Mask R-CNN v2): predict() contract, the v2 mask
head, torchvision v2 files (names, missing and unexpected keys, broken files), re-made
heads, devices, one training step (BN of the FPN, box and mask heads trains) and the
zoo entry."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.serializers import dictionary
from cvzoo.models import list_models, zoo
from cvzoo.models.instance_segmentation.mask_rcnn import (
    mask_rcnn_train_chain,
    torchvision_mask_rcnn,
    torchvision_mask_rcnn_v2,
)
from cvzoo.testing import assert_is_instance_segmentation_model
from tests.helpers import pth_writer
from tests.models.detection.faster_rcnn import test_torchvision_fpn_v2 as box_v2

# few instances: random weights detect up to the cap, and each one pools its mask
SMALL = {'min_size': 64, 'max_size': 96, 'max_detections': 6}


def _image(H, W, seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3, H, W)).astype(numpy.float32)


def _small_model(n_fg_class, seed):
    numpy.random.seed(seed)
    model = torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2(n_fg_class=n_fg_class, **SMALL)
    model.rpn.n_test_post_nms = 50
    return model


@pytest.fixture(scope='module')
def model():
    return _small_model(3, 0)


def torchvision_v2_shapes():
    """name -> shape of torchvision's maskrcnn_resnet50_fpn_v2 state_dict (91 classes)."""
    state = box_v2.torchvision_v2_shapes()
    for k in range(4):
        state[f'roi_heads.mask_head.{k}.0.weight'] = (256, 256, 3, 3)
        box_v2._bn_shapes(f'roi_heads.mask_head.{k}.1', 256, state)
    state['roi_heads.mask_predictor.conv5_mask.weight'] = (256, 256, 2, 2)
    state['roi_heads.mask_predictor.conv5_mask.bias'] = (256,)
    state['roi_heads.mask_predictor.mask_fcn_logits.weight'] = (91, 256, 1, 1)
    state['roi_heads.mask_predictor.mask_fcn_logits.bias'] = (91,)
    return state


@pytest.mark.parametrize('preset', ['visualize', 'evaluate'])
def test_predict_contract(model, preset):
    model.use_preset(preset)
    model.score_thresh = min(model.score_thresh, 0.3)  # random weights score about 1 / 4
    imgs = [_image(50, 70), _image(80, 40, 1)]
    assert_is_instance_segmentation_model(model, imgs, 3)
    masks, labels, _ = model.predict(imgs)
    assert all(0 < len(label) <= model.max_detections for label in labels)
    assert any(0 < mask.mean() < 1 for mask in masks)


def test_the_v2_mask_head(model):
    for i in range(1, 5):
        layer = getattr(model.mask_head, f'conv{i}')
        assert layer.conv.b is None and layer.bn.eps == 1e-5 and layer.activ is not None
    assert isinstance(model.mask_head, torchvision_mask_rcnn.TorchvisionMaskHead)
    assert model.mask_head.conv5.W.shape == (256, 256, 2, 2)
    assert not hasattr(model.head, 'fc2') and len(model.rpn.conv) == 2


def test_parameter_count_is_torchvisions():
    # torchvision's docs: MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1 num_params 46,359,409
    buffers = ('running_mean', 'running_var', 'num_batches_tracked')
    count = sum(int(numpy.prod(shape)) for key, shape in torchvision_v2_shapes().items()
                if not key.endswith(buffers))
    assert count == 46_359_409


def test_every_key_maps_once():
    model = torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2(min_size=64, max_size=96)
    raw = {key: numpy.zeros(shape, numpy.float32)
           for key, shape in torchvision_v2_shapes().items()}
    arrays = model.convert_weights(raw, 'torchvision')
    assert set(arrays) == set(dictionary.state_arrays(model))
    assert arrays['mask_head/seg/W'].shape == (91, 256, 1, 1)
    assert int(arrays['n_unused_class']) == 10


def test_wrong_file_names_every_missing_and_unexpected_key(tmp_path):
    # NOTE: names are checked before shapes, so one number per key is enough here
    arrays = {key: numpy.zeros(1, numpy.float32) for key in torchvision_v2_shapes()
              if not key.startswith('roi_heads.mask_head.1.1.')}
    unexpected = {'roi_heads.mask_head.mask_fcn2.bias', 'roi_heads.mask_head.4.0.weight'}
    arrays.update({key: numpy.zeros(1, numpy.float32) for key in unexpected})
    path = tmp_path / 'wrong_mask_v2.pth'
    pth_writer.write_state_dict(path, arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2(pretrained_model=str(path))
    message = str(info.value)
    for key in unexpected | {'mask_head/conv2/bn/gamma', 'mask_head/conv2/bn/avg_var'}:
        assert key in message
    assert 'mask_head/conv2/conv/W' not in message


def test_a_broken_file_is_named(tmp_path):
    path = tmp_path / 'broken_mask_v2.pth'
    path.write_bytes(b'\x80\x02 truncated')
    with pytest.raises(errors.CorruptFileError, match='broken_mask_v2.pth'):
        torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2(pretrained_model=str(path))


def test_other_n_fg_class_re_makes_the_class_layers():
    other = _small_model(3, 1)
    conv = other.mask_head.conv2.conv.W.array.copy()
    other.reset_head(5)
    assert other.n_fg_class == 5 and other.n_unused_class == 0
    assert other.mask_head.seg.W.shape == (6, 256, 1, 1)
    assert other.head.conf.W.shape == (6, 1024)
    numpy.testing.assert_array_equal(other.mask_head.conv2.conv.W.array, conv)


def test_weights_entry():
    entry = torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2.weights['coco']
    assert zoo.schema_problems(entry) == []
    assert entry.url == ('https://download.pytorch.org/models/'
                         'maskrcnn_resnet50_fpn_v2_coco-73cbd019.pth')
    assert entry.sha256 == '73cbd019' and entry.n_class == len(entry.label_names) == 80
    assert entry.reported.metric == 'mask_map_coco'
    assert entry.reported.value == pytest.approx(0.418) and '47.4' in entry.notes
    assert entry.license == 'BSD-3-Clause' and entry.box_convention == 'continuous'
    assert 'maskrcnn_resnet50_fpn_v2' in list_models('instance_segmentation')


def test_predict_on_the_device(device):
    model = _small_model(2, 0)
    model.score_thresh = 0.3
    imgs = [_image(50, 70)]
    expected = model.predict(imgs)
    model.to_device(device)
    masks, labels, scores = model.predict(imgs)
    assert isinstance(masks[0], numpy.ndarray) and len(labels[0]) > 0
    assert (masks[0] == expected[0][0]).mean() > 0.999
    numpy.testing.assert_array_equal(labels[0], expected[1][0])
    numpy.testing.assert_allclose(scores[0], expected[2][0], rtol=1e-4)
    assert all(param.device == backend.get_device(device) for param in model.params())


def test_one_training_step_trains_the_bn_of_the_fpn_and_both_heads(device):
    model = _small_model(3, 2)
    model.rpn.n_train_pre_nms = model.rpn.n_train_post_nms = 100
    chain = mask_rcnn_train_chain.TorchvisionMaskRCNNTrainChain(model, roi_n_sample=64)
    chain.to_device(device)
    xp = chain.xp
    x = xp.asarray(numpy.random.RandomState(3).standard_normal((1, 3, 64, 96)).astype(
        numpy.float32))
    bbox = numpy.array([[5, 5, 60, 50]], numpy.float32)
    mask = numpy.zeros((1, 64, 96), bool)
    mask[0, 10:45, 8:55] = True
    bns = {'fpn': model.extractor.inner[1].bn, 'box head': model.head.conv1.bn,
           'mask head': model.mask_head.conv3.bn}
    before = {name: backend.to_numpy(bn.avg_mean).copy() for name, bn in bns.items()}
    resnet_mean = backend.to_numpy(model.extractor.base.res5.a.conv1.bn.avg_mean).copy()
    loss = chain(x, [xp.asarray(bbox)], [xp.asarray([1], numpy.int32)], [mask], [(64, 96)])
    assert numpy.isfinite(float(loss.array))
    chain.cleargrads()
    loss.backward()
    for name, bn in bns.items():
        assert not numpy.array_equal(backend.to_numpy(bn.avg_mean), before[name]), name
        grad = backend.to_numpy(bn.gamma.grad)
        assert numpy.isfinite(grad).all() and grad.any(), name
    numpy.testing.assert_array_equal(
        backend.to_numpy(model.extractor.base.res5.a.conv1.bn.avg_mean), resnet_mean)
    assert backend.to_numpy(model.mask_head.seg.W.grad).any()


# NOTE: a 46.4M-parameter file is written, converted and loaded twice (4 to 8 s here)
def test_real_shape_file_loads_every_key(tmp_path, rng):
    arrays = box_v2.random_state(torchvision_v2_shapes(), rng)
    path = tmp_path / 'maskrcnn_v2.pth'
    pth_writer.write_state_dict(path, arrays)
    model = torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2(pretrained_model=str(path))
    assert (model.n_fg_class, model.n_unused_class) == (80, 10)
    numpy.testing.assert_array_equal(model.mask_head.conv2.bn.avg_var,
                                     arrays['roi_heads.mask_head.1.1.running_var'])
    numpy.testing.assert_array_equal(model.mask_head.conv4.conv.W.array,
                                     arrays['roi_heads.mask_head.3.0.weight'])
    logits = arrays['roi_heads.mask_predictor.mask_fcn_logits.bias']
    assert model.mask_head.seg.b.array[0] == logits[0]
    other = torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2(n_fg_class=7,
                                                         pretrained_model=str(path))
    assert (other.n_fg_class, other.n_unused_class) == (7, 0)
    assert other.mask_head.seg.W.shape == (8, 256, 1, 1)
    numpy.testing.assert_array_equal(other.mask_head.conv1.bn.gamma.array,
                                     arrays['roi_heads.mask_head.0.1.weight'])
