"""MobileNetV2: shapes, pick, width, predict, heads, torchvision weight loading."""

import numpy
import PIL.Image
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.classification.mobilenet import blocks, mobilenet_v2
from cvzoo.testing import assert_is_classification_model
from tests.helpers import mobilenet_layout, pth_writer

SMALL = zoo.Preset(size=64, mean=(120.0, 115.0, 100.0), std=(60.0, 60.0, 60.0),
                   crop_fraction=0.875)


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


def _param(model, key):
    obj = model
    for part in key.split('/'):
        obj = getattr(obj, part)
    return getattr(obj, 'array', obj)


@pytest.fixture(scope='module')
def model():
    return mobilenet_v2.MobileNetV2(n_class=10)


def test_output_shapes_and_pick(model):
    x = numpy.random.default_rng(0).uniform(-1, 1, (2, 3, 64, 64)).astype(numpy.float32)
    assert _forward(model, x).shape == (2, 10)
    model.pick = ('conv', 'expanded_conv', 'expanded_conv_2', 'expanded_conv_5',
                  'expanded_conv_12', 'expanded_conv_16', 'conv1', 'pool')
    shapes = [h.shape for h in _forward(model, x)]
    model.pick = 'fc'
    assert shapes == [(2, 32, 32, 32), (2, 16, 32, 32), (2, 24, 16, 16), (2, 32, 8, 8),
                      (2, 96, 4, 4), (2, 320, 2, 2), (2, 1280, 2, 2), (2, 1280)]
    assert model.layer_names[-3:] == ['pool', 'dropout', 'fc']


def test_residual_only_where_shape_is_kept(model):
    residual = [getattr(model, name).residual for name in mobilenet_v2.BLOCK_NAMES]
    assert [i for i, r in enumerate(residual) if r] == [2, 4, 5, 7, 8, 9, 11, 12, 14, 15]
    assert not hasattr(model.expanded_conv, 'expand')
    assert model.expanded_conv_1.expand.conv.W.shape == (96, 16, 1, 1)
    assert model.expanded_conv_1.depthwise.conv.W.shape == (96, 1, 3, 3)


@pytest.mark.parametrize('width, channels, n_param', [
    (1.0, (32, 16, 320, 1280), 3504872),
    (1.4, (48, 24, 448, 1792), 6108776),
    (0.5, (16, 8, 160, 1280), 1968680),
], ids=['width_1.0', 'width_1.4', 'width_0.5'])
def test_width_multiplier(width, channels, n_param):
    net = mobilenet_v2.MobileNetV2(width_multiplier=width)
    found = (net.conv.conv.W.shape[0], net.expanded_conv.project.conv.W.shape[0],
             net.expanded_conv_16.project.conv.W.shape[0], net.conv1.conv.W.shape[0])
    assert found == channels
    assert sum(p.size for p in net.params()) == n_param  # torchvision's / timm's counts


def test_make_divisible():
    assert [blocks.make_divisible(v) for v in (3, 12, 16 * 1.4, 24 * 0.35, 1280 * 1.4)] == \
        [8, 16, 24, 8, 1792]


@pytest.mark.parametrize('kwargs, message', [
    ({'width_multiplier': 0}, 'width_multiplier: expected a number > 0'),
    ({'width_multiplier': 1.4, 'pretrained_model': 'imagenet'}, 'width 1.0 only'),
    ({'pretrained_model': 'imagenet_v9'}, "no weights 'imagenet_v9'"),
], ids=['zero_width', 'key_with_width_1.4', 'unknown_key'])
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mobilenet_v2.MobileNetV2(**kwargs)


def test_predict_on_each_input_kind(model, tmp_path):
    rng = numpy.random.default_rng(1)
    model.preset = SMALL
    hwc = rng.integers(0, 256, (50, 70, 3), dtype=numpy.uint8)
    PIL.Image.fromarray(hwc).save(tmp_path / 'img.png')
    chw = rng.uniform(0, 255, (3, 80, 60)).astype(numpy.float32)
    imgs = [chw, hwc, PIL.Image.fromarray(hwc), str(tmp_path / 'img.png')]
    assert_is_classification_model(model, imgs, 10)
    probs = model.predict(imgs)
    numpy.testing.assert_allclose(probs[1], probs[2], rtol=1e-4, atol=1e-7)
    numpy.testing.assert_allclose(probs[1], probs[3], rtol=1e-4, atol=1e-7)
    assert model.to_device('cpu') is model


def test_reset_head(model):
    model.reset_head(3)
    assert model.fc.W.shape == (3, 1280) and model.layer_names[-1] == 'fc'
    assert _forward(model, numpy.zeros((1, 3, 32, 32), numpy.float32)).shape == (1, 3)
    model.reset_head(10)


def test_load_torchvision_pth(tmp_path):
    state = mobilenet_layout.mobilenet_v2_state(numpy.random.default_rng(2))
    pth_writer.write_state_dict(tmp_path / 'mnv2.pth', state)
    net = mobilenet_v2.MobileNetV2(pretrained_model=tmp_path / 'mnv2.pth')
    expected = {
        'conv/conv/W': 'features.0.0.weight', 'conv/bn/avg_var': 'features.0.1.running_var',
        'expanded_conv/depthwise/conv/W': 'features.1.conv.0.0.weight',
        'expanded_conv/project/conv/W': 'features.1.conv.1.weight',
        'expanded_conv/project/bn/beta': 'features.1.conv.2.bias',
        'expanded_conv_1/expand/bn/gamma': 'features.2.conv.0.1.weight',
        'expanded_conv_7/depthwise/bn/avg_mean': 'features.8.conv.1.1.running_mean',
        'expanded_conv_16/project/conv/W': 'features.17.conv.2.weight',
        'expanded_conv_16/project/bn/avg_var': 'features.17.conv.3.running_var',
        'conv1/conv/W': 'features.18.0.weight', 'fc/W': 'classifier.1.weight',
        'fc/b': 'classifier.1.bias'}
    for key, torch_key in expected.items():
        numpy.testing.assert_array_equal(_param(net, key), state[torch_key], err_msg=key)
    assert net.expanded_conv_3.project.bn.N == 0


def test_zoo_key_with_other_n_class_loads_all_but_the_head(tmp_path, monkeypatch):
    state = mobilenet_layout.mobilenet_v2_state(numpy.random.default_rng(3))
    pth_writer.write_state_dict(tmp_path / 'mobilenet_v2-b0353104.pth', state)
    monkeypatch.setattr(zoo, 'fetch_weights',
                        lambda entry: [str(tmp_path / entry.main_file.file_name)])
    net = mobilenet_v2.MobileNetV2(n_class=4, pretrained_model='imagenet')
    assert net.fc.W.shape == (4, 1280) and net.label_names is None
    numpy.testing.assert_array_equal(net.conv1.conv.W.array, state['features.18.0.weight'])
    assert net.preset == mobilenet_v2.MobileNetV2.weights['imagenet'].preset


def test_wrong_file_reports_every_key(tmp_path):
    state = mobilenet_layout.mobilenet_v2_state(numpy.random.default_rng(4), n_class=7)
    del state['features.5.conv.1.0.weight']
    state['features.3.conv.0.0.weight'] = state['features.3.conv.0.0.weight'][:100]
    pth_writer.write_state_dict(tmp_path / 'bad.pth', state)
    with pytest.raises(errors.WeightLoadError) as info:
        mobilenet_v2.MobileNetV2(pretrained_model=tmp_path / 'bad.pth')
    message = str(info.value)
    for part in ('expanded_conv_4/depthwise/conv/W', 'expanded_conv_2/expand/conv/W',
                 '(100, 24, 1, 1)', 'fc/W', '(7, 1280)', 'bad.pth'):
        assert part in message, message
    state['features.19.0.weight'] = state.pop('classifier.1.weight')
    state['features.2.conv.9.weight'] = state['classifier.1.bias']
    pth_writer.write_state_dict(tmp_path / 'foreign.pth', state)
    with pytest.raises(errors.WeightLoadError,
                       match=r'features\.19\.0\.weight, features\.2\.conv\.9\.weight'):
        mobilenet_v2.MobileNetV2(pretrained_model=tmp_path / 'foreign.pth')


def test_entries_follow_the_schema():
    for key, entry in mobilenet_v2.MobileNetV2.weights.items():
        assert zoo.schema_problems(entry) == [], key
        assert entry.convert_from == 'torchvision' and entry.n_class == 1000

