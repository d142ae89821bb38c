"""SqueezeNet 1.0/1.1: shapes, pick, ceil-mode pooling, predict, heads, weight loading."""

import numpy
import PIL.Image
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.classification.squeezenet import squeezenet
from cvzoo.testing import assert_is_classification_model
from tests.helpers import pth_writer, torch_squeezenet

CLASSES = {'1_0': squeezenet.SqueezeNet1_0, '1_1': squeezenet.SqueezeNet1_1}
SMALL = zoo.Preset(size=48, mean=(120.0, 115.0, 100.0), std=(60.0, 60.0, 60.0))


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


@pytest.fixture(scope='module', params=['1_0', '1_1'])
def model(request):
    net = CLASSES[request.param](n_class=10)
    net.version = request.param
    return net


@pytest.mark.parametrize('version, picks, shapes', [
    ('1_0', ('conv1', 'pool1', 'fire4', 'pool4', 'fire8', 'pool8', 'fire9', 'conv10'),
     [(2, 96, 31, 31), (2, 96, 15, 15), (2, 256, 15, 15), (2, 256, 7, 7), (2, 512, 7, 7),
      (2, 512, 3, 3), (2, 512, 3, 3), (2, 10, 3, 3)]),
    ('1_1', ('conv1', 'pool1', 'fire3', 'pool3', 'fire5', 'pool5', 'fire9', 'conv10'),
     [(2, 64, 33, 33), (2, 64, 16, 16), (2, 128, 16, 16), (2, 128, 8, 8), (2, 256, 8, 8),
      (2, 256, 4, 4), (2, 512, 4, 4), (2, 10, 4, 4)]),
], ids=['v1_0', 'v1_1'])
def test_output_shapes_pick_and_ceil_mode_pooling(version, picks, shapes):
    net = CLASSES[version](n_class=10)
    x = numpy.random.default_rng(0).uniform(-1, 1, (2, 3, 68, 68)).astype(numpy.float32)
    logits = _forward(net, x)
    assert logits.shape == (2, 10) and (logits.array >= 0).all()  # after relu10
    net.pick = picks
    # NOTE: v1.1's 16 -> 8 and 8 -> 4 need ceil-mode pooling (floor mode gives 7 and 3);
    # v1.0's odd sizes check that cover_all adds no window too many
    assert [h.shape for h in _forward(net, x)] == shapes


def test_parameter_counts():
    assert sum(p.size for p in squeezenet.SqueezeNet1_0().params()) == 1248424
    assert sum(p.size for p in squeezenet.SqueezeNet1_1().params()) == 1235496


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


def test_reset_head_keeps_the_layer_order(model):
    order = list(model.layer_names)
    model.reset_head(3)
    assert model.conv10.W.shape == (3, 512, 1, 1) and model.layer_names == order
    assert _forward(model, numpy.zeros((1, 3, 48, 48), numpy.float32)).shape == (1, 3)
    model.reset_head(10)


@pytest.mark.parametrize('version', ['1_0', '1_1'])
def test_load_torchvision_pth(tmp_path, version):
    state = torch_squeezenet.squeezenet_state(numpy.random.default_rng(2), version)
    pth_writer.write_state_dict(tmp_path / 'sq.pth', state)
    net = CLASSES[version](pretrained_model=tmp_path / 'sq.pth')
    index = {name: args[0] for name, args in
             zip([f'fire{i}' for i in range(2, 10)], torch_squeezenet.FIRES[version])}
    numpy.testing.assert_array_equal(net.conv1.W.array, state['features.0.weight'])
    for name, i in index.items():
        numpy.testing.assert_array_equal(getattr(net, name).expand3x3.b.array,
                                         state[f'features.{i}.expand3x3.bias'], err_msg=name)
    numpy.testing.assert_array_equal(net.conv10.W.array, state['classifier.1.weight'])


def test_wrong_file_reports_every_key(tmp_path):
    state = torch_squeezenet.squeezenet_state(numpy.random.default_rng(3), '1_1', n_class=7)
    del state['features.6.squeeze.bias']
    state['features.11.expand1x1.weight'] = state['features.11.expand1x1.weight'][:5]
    pth_writer.write_state_dict(tmp_path / 'bad.pth', state)
    with pytest.raises(errors.WeightLoadError) as info:
        squeezenet.SqueezeNet1_1(pretrained_model=tmp_path / 'bad.pth')
    message = str(info.value)
    for part in ('fire4/squeeze/b', 'fire8/expand1x1/W', '(5, 64, 1, 1)', 'conv10/W',
                 '(7, 512, 1, 1)', 'bad.pth'):
        assert part in message, message
    state['features.5.squeeze.weight'] = state['features.3.squeeze.weight']  # a pool index
    state['classifier.2.weight'] = state['classifier.1.bias']
    pth_writer.write_state_dict(tmp_path / 'foreign.pth', state)
    with pytest.raises(errors.WeightLoadError,
                       match=r'classifier\.2\.weight, features\.5\.squeeze\.weight'):
        squeezenet.SqueezeNet1_1(pretrained_model=tmp_path / 'foreign.pth')


def test_entries_and_deepscale_preset():
    for cls in CLASSES.values():
        for key, entry in cls.weights.items():
            assert zoo.schema_problems(entry) == [], (cls, key)
    preset = squeezenet.DEEPSCALE_PRESET
    assert (preset.size, preset.mean, preset.std, preset.crop_fraction) == \
        (227, (123.0, 117.0, 104.0), (1.0, 1.0, 1.0), None)
    assert not any(e.url.endswith('deepscale.pth') for cls in CLASSES.values()
                   for e in cls.weights.values())
