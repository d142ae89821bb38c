"""Tests of FCN-ResNet50/101 and their base: shapes, dilation, predict(), heads, weights."""

import dataclasses

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.segmentation import torchvision_presets
from cvzoo.models.segmentation.fcn import fcn
from cvzoo.testing import assert_is_semantic_segmentation_model
from tests.helpers import segmenter_layout


def _forward(model, x, aux=False):
    with config.using_config('train', False), config.no_backprop_mode():
        return model.forward_with_aux(x) if aux else model(x)


@pytest.fixture(scope='module')
def model():
    net = fcn.FCNResNet50(n_class=5)
    net.preset = dataclasses.replace(net.preset, size=40)
    return net


def test_backbone_is_dilated_at_output_stride_8(model):
    with config.using_config('train', False), config.no_backprop_mode():
        res4, res5 = model.backbone(numpy.zeros((1, 3, 64, 80), numpy.float32))
    assert res4.shape == (1, 1024, 8, 10) and res5.shape == (1, 2048, 8, 10)
    dilations = {name: model.backbone[stage][block].conv2.conv.dilate
                 for name, (stage, block) in {'res3_a': ('res3', 'a'), 'res4_a': ('res4', 'a'),
                                              'res4_b5': ('res4', 'b5'), 'res5_a': ('res5', 'a'),
                                              'res5_b2': ('res5', 'b2')}.items()}
    # torchvision: a dilated stage's first block keeps the previous stage's dilation
    assert dilations == {'res3_a': 1, 'res4_a': 1, 'res4_b5': 2, 'res5_a': 2, 'res5_b2': 4}
    assert model.backbone.res5.b2.conv2.conv.pad in (4, (4, 4))


SIZES = {'square': (64, 64), 'odd': (37, 53), 'tiny': (5, 7)}


@pytest.mark.parametrize('size', list(SIZES.values()), ids=list(SIZES))
def test_main_and_aux_scores_at_the_input_size(model, size, rng):
    x = rng.standard_normal((2, 3) + size).astype(numpy.float32)
    main, aux = _forward(model, x, aux=True)
    assert main.shape == aux.shape == (2, 5) + size and main.dtype == numpy.float32
    numpy.testing.assert_allclose(_forward(model, x).array, main.array, rtol=1e-5, atol=1e-5)


def test_predict_contract(model, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for size in ((40, 60), (40, 60), (33, 21))]
    imgs.append(rng.integers(0, 255, (30, 50, 3), dtype=numpy.uint8))  # HWC uint8
    assert_is_semantic_segmentation_model(model, imgs, 5)


def test_predict_matches_forward_when_no_resize_is_needed(model, rng):
    img = rng.uniform(0, 255, (3, 40, 56)).astype(numpy.float32)  # shorter side 40 already
    assert model.input_size(img) == (40, 56)
    x = model.prepare(img)
    mean = numpy.asarray(model.preset.mean, numpy.float32)[:, None, None]
    std = numpy.asarray(model.preset.std, numpy.float32)[:, None, None]
    numpy.testing.assert_allclose(x, (img - mean) / std, rtol=1e-5)  # RGB, ImageNet mean/std
    expected = _forward(model, x[None]).array[0].argmax(axis=0)
    numpy.testing.assert_array_equal(model.predict([img])[0], expected)


@pytest.mark.parametrize('size, expected', [
    ((360, 480), (520, 693)), ((500, 375), (693, 520)), ((520, 520), (520, 520)),
    ((1, 3), (520, 1560))], ids=['landscape', 'portrait', 'square', 'thin'])
def test_shorter_side_resize_as_torchvision(size, expected):
    assert torchvision_presets.shorter_side_size(size, 520) == expected
    net = fcn.FCNResNet50.__new__(fcn.FCNResNet50)  # input_size reads only the preset
    assert net.input_size(numpy.zeros((3,) + size, numpy.float32)) == expected


def test_reset_head_keeps_the_backbone(model):
    conv1 = model.backbone.conv1.conv.W.array.copy()
    model.reset_head(3)
    assert model.n_class == 3 and model.classifier.classifier.W.shape == (3, 512, 1, 1)
    assert model.aux_classifier.classifier.W.shape == (3, 256, 1, 1)
    numpy.testing.assert_array_equal(model.backbone.conv1.conv.W.array, conv1)
    assert _forward(model, numpy.zeros((1, 3, 16, 16), numpy.float32)).shape == (1, 3, 16, 16)
    model.reset_head(5)


@pytest.mark.parametrize('call', [lambda: fcn.FCNResNet50(),
                                  lambda: fcn.FCNResNet50(n_class=0)], ids=['none', 'zero'])
def test_n_class_errors(call):
    with pytest.raises(ValueError, match='n_class'):
        call()


def test_without_aux_head():
    net = fcn.FCNResNet50(n_class=4, aux=False)
    assert not hasattr(net, 'aux_classifier')
    assert len(net.backbone.res4.layer_names) == 6
    with pytest.raises(ValueError, match='aux=False'):
        net.forward_with_aux(numpy.zeros((1, 3, 8, 8), numpy.float32))


def _check_pairs(net, values, pairs):
    for path, torch_key in pairs.items():
        link_path, leaf = path.rsplit('/', 1)
        target = net
        for name in link_path.split('/'):
            target = target[name]
        array = getattr(target, leaf)
        array = getattr(array, 'array', array)
        assert numpy.all(array == values[torch_key]), (path, torch_key)


FCN_PAIRS = {
    'backbone/conv1/conv/W': 'backbone.conv1.weight',
    'backbone/conv1/bn/avg_var': 'backbone.bn1.running_var',
    'backbone/res2/a/residual_conv/conv/W': 'backbone.layer1.0.downsample.0.weight',
    'backbone/res3/b3/conv3/bn/gamma': 'backbone.layer2.3.bn3.weight',
    'backbone/res4/b5/conv2/conv/W': 'backbone.layer3.5.conv2.weight',
    'backbone/res5/a/residual_conv/bn/avg_mean': 'backbone.layer4.0.downsample.1.running_mean',
    'classifier/conv/conv/W': 'classifier.0.weight',
    'classifier/conv/bn/beta': 'classifier.1.bias',
    'classifier/classifier/W': 'classifier.4.weight',
    'classifier/classifier/b': 'classifier.4.bias',
    'aux_classifier/conv/bn/gamma': 'aux_classifier.1.weight',
    'aux_classifier/classifier/b': 'aux_classifier.4.bias',
}


def test_load_a_torchvision_file_with_the_real_shapes(tmp_path):
    shapes = segmenter_layout.segmenter_shapes(50, 'fcn')
    values = segmenter_layout.write_constant_pth(tmp_path / 'fcn_resnet50.pth', shapes)
    net = fcn.FCNResNet50(n_class=21, pretrained_model=tmp_path / 'fcn_resnet50.pth')
    _check_pairs(net, values, FCN_PAIRS)
    assert net.backbone.res4.b2.conv1.bn.N == 0


def test_aux_keys_are_dropped_without_the_aux_head(tmp_path):
    segmenter_layout.write_constant_pth(tmp_path / 'fcn.pth',
                                        segmenter_layout.segmenter_shapes(50, 'fcn'))
    net = fcn.FCNResNet50(n_class=21, pretrained_model=tmp_path / 'fcn.pth', aux=False)
    assert not hasattr(net, 'aux_classifier')


def test_wrong_file_names_every_bad_key(tmp_path):
    shapes = segmenter_layout.segmenter_shapes(50, 'fcn')
    del shapes['backbone.layer3.2.conv2.weight']
    shapes['backbone.layer5.0.conv1.weight'] = (1, 1, 1, 1)
    shapes['classifier.4.weight'] = (7, 512, 1, 1)
    segmenter_layout.write_constant_pth(tmp_path / 'bad.pth', shapes)
    with pytest.raises(errors.WeightLoadError) as info:
        fcn.FCNResNet50(n_class=21, pretrained_model=tmp_path / 'bad.pth')
    message = str(info.value)
    for part in ('backbone.layer3.2.conv2.weight', 'backbone.layer5.0.conv1.weight',
                 'classifier.4.weight (7, 512, 1, 1) (expected (21, 512, 1, 1))'):
        assert part in message, message


def test_zoo_key_with_other_n_class_loads_all_but_the_heads(tmp_path, monkeypatch):
    entry = fcn.FCNResNet50.weights['coco_voc']
    values = segmenter_layout.write_constant_pth(tmp_path / entry.main_file.file_name,
                                       segmenter_layout.segmenter_shapes(50, 'fcn'))
    monkeypatch.setattr(zoo, 'fetch_weights',
                        lambda weights: [str(tmp_path / weights.main_file.file_name)])
    net = fcn.FCNResNet50(n_class=3, pretrained_model='coco_voc')
    assert net.n_class == 3 and net.label_names is None
    assert net.classifier.classifier.W.shape == (3, 512, 1, 1)
    assert numpy.all(net.classifier.conv.conv.W.array != values['classifier.0.weight'])
    _check_pairs(net, values, {k: v for k, v in FCN_PAIRS.items() if k.startswith('backbone')})
    assert net.preset == entry.preset


@pytest.mark.slow
def test_load_fcn_resnet101_with_the_real_shapes(tmp_path):
    values = segmenter_layout.write_constant_pth(tmp_path / 'fcn101.pth',
                                       segmenter_layout.segmenter_shapes(101, 'fcn'))
    net = fcn.FCNResNet101(n_class=21, pretrained_model=tmp_path / 'fcn101.pth')
    _check_pairs(net, values, {'backbone/res4/b22/conv3/bn/avg_var':
                               'backbone.layer3.22.bn3.running_var', **FCN_PAIRS})


@pytest.mark.parametrize('cls, n_param', [(fcn.FCNResNet50, 35322218),
                                          (fcn.FCNResNet101, 54314346)], ids=['r50', 'r101'])
def test_entries_and_parameter_counts(cls, n_param):
    entry = cls.weights['coco_voc']
    assert zoo.schema_problems(entry) == []
    assert entry.n_class == 21 and entry.label_names[0] == 'background'
    assert entry.preset.size == 520 and entry.url.endswith(entry.sha256 + '.pth')
    assert 'COCO val2017' in entry.reported.source
    if cls is fcn.FCNResNet50:  # torchvision's num_params (aux head included)
        net = cls(n_class=21)
        assert sum(p.size for p in net.params()) == n_param
