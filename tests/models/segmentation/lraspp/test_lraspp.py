"""Tests of LR-ASPP MobileNetV3-Large: dilation, head, shapes, predict(), weights."""

import collections
import dataclasses

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.segmentation.lraspp import lraspp
from cvzoo.models.segmentation.lraspp.lraspp_head import LRASPPHead
from cvzoo.testing import assert_is_semantic_segmentation_model
from tests.helpers import mobilenet_layout, pth_writer


def _test_mode(call, *args):
    with config.using_config('train', False), config.no_backprop_mode():
        return call(*args)


@pytest.fixture(scope='module')
def model():
    net = lraspp.LRASPPMobileNetV3Large(n_class=5)
    net.preset = dataclasses.replace(net.preset, size=64)
    return net


def test_last_stage_is_dilated_at_output_stride_16(model):
    low, high = _test_mode(model.backbone, numpy.zeros((1, 3, 64, 96), numpy.float32))
    assert low.shape == (1, 40, 8, 12) and high.shape == (1, 960, 4, 6)
    for name in lraspp.DILATED_BLOCKS:
        conv = model.backbone[name].depthwise.conv
        assert (conv.dilate, conv.stride, conv.pad) in ((2, 1, 4), ((2, 2), (1, 1), (4, 4)))
    assert model.backbone.expanded_conv_11.depthwise.conv.dilate in (1, (1, 1))
    assert [model.backbone[n].residual for n in lraspp.DILATED_BLOCKS] == [False, True, True]
    assert 'fc2' not in model.backbone.layer_names


def test_head_against_numpy(rng):
    head = LRASPPHead(3, 6, 4, inter_channels=5)
    head.cbr.bn.beta.array[...] = rng.uniform(-0.5, 0.5, 5)
    low = rng.standard_normal((2, 3, 4, 5)).astype(numpy.float32)
    high = rng.standard_normal((2, 6, 4, 5)).astype(numpy.float32)  # same size: no resize
    y = _test_mode(head, low, high).array

    def conv1x1(x, link):
        out = numpy.einsum('oc,bchw->bohw', link.W.array[:, :, 0, 0], x)
        return out if link.b is None else out + link.b.array[:, None, None]

    bn = head.cbr.bn
    h = conv1x1(high, head.cbr.conv) / numpy.sqrt(1 + bn.eps) + bn.beta.array[:, None, None]
    gate = 1 / (1 + numpy.exp(-conv1x1(high.mean(axis=(2, 3), keepdims=True), head.scale)))
    expected = conv1x1(low, head.low_classifier) + conv1x1(numpy.maximum(h, 0) * gate,
                                                           head.high_classifier)
    numpy.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


SIZES = {'square': (64, 64), 'odd': (37, 53), 'tiny': (3, 5)}


@pytest.mark.parametrize('size', list(SIZES.values()), ids=list(SIZES))
def test_scores_at_the_input_size(model, size, rng):
    y = _test_mode(model, rng.standard_normal((2, 3) + size).astype(numpy.float32))
    assert y.shape == (2, 5) + size and y.dtype == numpy.float32


def test_predict_contract(model, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for size in ((64, 80), (64, 80), (100, 30))]
    imgs.append(rng.integers(0, 255, (20, 30, 3), dtype=numpy.uint8))
    assert_is_semantic_segmentation_model(model, imgs, 5)
    expected = _test_mode(model, model.prepare(imgs[0])[None]).array[0].argmax(axis=0)
    numpy.testing.assert_array_equal(model.predict(imgs[:1])[0], expected)


def test_reset_head_and_errors(model):
    stem = model.backbone.conv.conv.W.array.copy()
    model.reset_head(3)
    assert model.classifier.low_classifier.W.shape == (3, 40, 1, 1)
    assert model.classifier.high_classifier.W.shape == (3, 128, 1, 1)
    numpy.testing.assert_array_equal(model.backbone.conv.conv.W.array, stem)
    model.reset_head(5)
    with pytest.raises(ValueError, match='n_class'):
        lraspp.LRASPPMobileNetV3Large()
    with pytest.raises(ValueError, match='n_class'):
        model.reset_head(-1)


def _torchvision_state(rng, n_class=21):
    """torchvision's lraspp_mobilenet_v3_large state dict with random values."""
    features = mobilenet_layout.mobilenet_v3_large_state(rng)
    state = collections.OrderedDict(
        ('backbone.' + k.removeprefix('features.'), v) for k, v in features.items()
        if k.startswith('features.'))
    state['classifier.cbr.0.weight'] = rng.standard_normal((128, 960, 1, 1)).astype('f')
    for leaf, value in (('weight', 1.0), ('bias', 0.1), ('running_mean', 0.2),
                        ('running_var', 1.5)):
        state[f'classifier.cbr.1.{leaf}'] = numpy.full(128, value, numpy.float32)
    state['classifier.cbr.1.num_batches_tracked'] = numpy.array(5, numpy.int64)
    state['classifier.scale.1.weight'] = rng.standard_normal((128, 960, 1, 1)).astype('f')
    for name, n_in in (('low_classifier', 40), ('high_classifier', 128)):
        state[f'classifier.{name}.weight'] = rng.standard_normal((n_class, n_in, 1, 1)).astype('f')
        state[f'classifier.{name}.bias'] = rng.standard_normal(n_class).astype('f')
    return state


PAIRS = {
    'backbone/conv/conv/W': 'backbone.0.0.weight',
    'backbone/expanded_conv_3/se/down/W': 'backbone.4.block.2.fc1.weight',
    'backbone/expanded_conv_12/depthwise/conv/W': 'backbone.13.block.1.0.weight',
    'backbone/expanded_conv_14/project/bn/avg_var': 'backbone.15.block.3.1.running_var',
    'backbone/conv1/bn/gamma': 'backbone.16.1.weight',
    'classifier/cbr/conv/W': 'classifier.cbr.0.weight',
    'classifier/cbr/bn/avg_mean': 'classifier.cbr.1.running_mean',
    'classifier/scale/W': 'classifier.scale.1.weight',
    'classifier/low_classifier/b': 'classifier.low_classifier.bias',
    'classifier/high_classifier/W': 'classifier.high_classifier.weight',
}


def test_load_a_torchvision_file(tmp_path, rng):
    state = _torchvision_state(rng)
    pth_writer.write_state_dict(tmp_path / 'lraspp.pth', state)
    net = lraspp.LRASPPMobileNetV3Large(n_class=21, pretrained_model=tmp_path / 'lraspp.pth')
    for path, torch_key in PAIRS.items():
        *names, leaf = path.split('/')
        target = net
        for name in names:
            target = target[name]
        value = getattr(target, leaf)
        numpy.testing.assert_array_equal(getattr(value, 'array', value), state[torch_key],
                                         err_msg=path)
    assert sum(p.size for p in net.params()) == 3221538  # torchvision's num_params


def test_wrong_file_names_every_bad_key(tmp_path, rng):
    state = _torchvision_state(rng)
    del state['backbone.7.block.1.1.running_mean']
    state['classifier.scale.0.weight'] = state.pop('classifier.scale.1.weight')
    state['classifier.low_classifier.bias'] = state['classifier.low_classifier.bias'][:3]
    pth_writer.write_state_dict(tmp_path / 'bad.pth', state)
    with pytest.raises(errors.WeightLoadError) as info:
        lraspp.LRASPPMobileNetV3Large(n_class=21, pretrained_model=tmp_path / 'bad.pth')
    message = str(info.value)
    for part in ('backbone.7.block.1.1.running_mean', 'classifier.scale.0.weight',
                 'classifier.scale.1.weight', 'classifier.low_classifier.bias (3,)'):
        assert part in message, message


def test_entry():
    entry = lraspp.LRASPPMobileNetV3Large.weights['coco_voc']
    assert zoo.schema_problems(entry) == []
    assert entry.n_class == 21 and entry.sha256 == 'd234d4ea'
    assert entry.reported.value == 0.579
    assert 'lraspp_mobilenet_v3_large' in zoo.list_models('semantic_segmentation')
