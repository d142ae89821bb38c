"""MobileNetV3-Large: shapes, pick, SE blocks, predict, heads, torchvision weight loading."""

import numpy
import PIL.Image
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.classification.mobilenet import blocks, mobilenet_v3
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
    return mobilenet_v3.MobileNetV3Large(n_class=10)


def test_output_shapes_and_pick(model):
    x = numpy.random.default_rng(0).uniform(-1, 1, (2, 3, 64, 64)).astype(numpy.float32)
    assert _forward(model, x).shape == (2, 10)
    model.pick = ('conv', 'expanded_conv_2', 'expanded_conv_5', 'expanded_conv_11',
                  'conv1', 'pool', 'fc1')
    shapes = [h.shape for h in _forward(model, x)]
    model.pick = 'fc2'
    assert shapes == [(2, 16, 32, 32), (2, 24, 16, 16), (2, 40, 8, 8), (2, 112, 4, 4),
                      (2, 960, 2, 2), (2, 960), (2, 1280)]


def test_blocks_follow_table_1(model):
    for name, (in_channels, k, expanded, out, hidden) in zip(mobilenet_v3.BLOCK_NAMES,
                                                             mobilenet_layout.V3_BLOCKS):
        block = getattr(model, name)
        assert block.depthwise.conv.W.shape == (expanded, 1, k, k), name
        assert block.project.conv.W.shape == (out, expanded, 1, 1), name
        assert hasattr(block, 'expand') == (expanded != in_channels), name
        assert (block.se.down.W.shape[0] if hasattr(block, 'se') else 0) == hidden, name
    assert sum(p.size for p in mobilenet_v3.MobileNetV3Large().params()) == 5483032


def test_se_gate_is_torchvision_hard_sigmoid():
    se = blocks.SqueezeExcitation(4, 2)
    se.up.W.array[...] = 0
    se.up.b.array[...] = numpy.array([-4, -1.5, 0, 3.5], numpy.float32)
    u = numpy.ones((1, 4, 3, 3), numpy.float32)
    gate = se(u).array[0, :, 0, 0]
    numpy.testing.assert_allclose(gate, [0, 0.25, 0.5, 1], atol=1e-6)  # relu6(x + 3) / 6


def test_predict_on_each_input_kind(model, tmp_path):
    rng = numpy.random.default_rng(1)
    model.preset = SMALL
    hwc = rng.integers(0, 256, (50, 70, 3), dtype=numpy.uint8)
    PIL.Image.fromarray(hwc).save(tmp_path / 'img.png')
    chw = rng.uniform(0, 255, (3, 80, 60)).astype(numpy.float32)
    imgs = [chw, hwc, PIL.Image.fromarray(hwc), str(tmp_path / 'img.png')]
    assert_is_classification_model(model, imgs, 10)
    probs = model.predict(imgs)
    numpy.testing.assert_allclose(probs[1], probs[3], rtol=1e-4, atol=1e-7)
    assert model.to_device('cpu') is model


def test_reset_head(model):
    model.reset_head(3)
    assert model.fc2.W.shape == (3, 1280) and model.layer_names[-1] == 'fc2'
    assert _forward(model, numpy.zeros((1, 3, 32, 32), numpy.float32)).shape == (1, 3)
    model.reset_head(10)


def test_load_torchvision_pth(tmp_path):
    state = mobilenet_layout.mobilenet_v3_large_state(numpy.random.default_rng(2))
    pth_writer.write_state_dict(tmp_path / 'mnv3.pth', state)
    net = mobilenet_v3.MobileNetV3Large(pretrained_model=tmp_path / 'mnv3.pth')
    expected = {
        'conv/bn/gamma': 'features.0.1.weight',
        'expanded_conv/depthwise/conv/W': 'features.1.block.0.0.weight',
        'expanded_conv/project/bn/avg_mean': 'features.1.block.1.1.running_mean',
        'expanded_conv_3/expand/conv/W': 'features.4.block.0.0.weight',
        'expanded_conv_3/se/down/W': 'features.4.block.2.fc1.weight',
        'expanded_conv_3/se/up/b': 'features.4.block.2.fc2.bias',
        'expanded_conv_3/project/conv/W': 'features.4.block.3.0.weight',
        'expanded_conv_6/project/bn/avg_var': 'features.7.block.2.1.running_var',
        'conv1/conv/W': 'features.16.0.weight', 'fc1/W': 'classifier.0.weight',
        'fc2/b': 'classifier.3.bias'}
    for key, torch_key in expected.items():
        numpy.testing.assert_array_equal(_param(net, key), state[torch_key], err_msg=key)


def test_wrong_file_reports_every_key(tmp_path):
    state = mobilenet_layout.mobilenet_v3_large_state(numpy.random.default_rng(4), n_class=7)
    del state['features.12.block.2.fc2.weight']
    state['features.16.0.weight'] = state['features.16.0.weight'][:, :8]
    pth_writer.write_state_dict(tmp_path / 'bad.pth', state)
    with pytest.raises(errors.WeightLoadError) as info:
        mobilenet_v3.MobileNetV3Large(pretrained_model=tmp_path / 'bad.pth')
    message = str(info.value)
    for part in ('expanded_conv_11/se/up/W', 'conv1/conv/W', '(960, 8, 1, 1)', 'fc2/W',
                 '(7, 1280)', 'bad.pth'):
        assert part in message, message
    state['features.4.block.2.fc3.weight'] = state.pop('classifier.3.weight')
    pth_writer.write_state_dict(tmp_path / 'foreign.pth', state)
    with pytest.raises(errors.WeightLoadError, match=r'features\.4\.block\.2\.fc3\.weight'):
        mobilenet_v3.MobileNetV3Large(pretrained_model=tmp_path / 'foreign.pth')


def test_entries_follow_the_schema():
    entries = mobilenet_v3.MobileNetV3Large.weights
    for key, entry in entries.items():
        assert zoo.schema_problems(entry) == [], key
    assert entries['imagenet_v2'].preset.crop_fraction == pytest.approx(224 / 232)
