"""VGG16: ChainerCV layer names, adaptive pool5, predict, heads, torchvision name mapping."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config, initializers
from cvzoo.models import zoo
from cvzoo.models.classification.vgg import vgg16
from cvzoo.testing import assert_is_classification_model
from tests.helpers import pth_writer

# torchvision's VGG16 state dict: features.<i> for the 13 convolutions, classifier.<i>
_CONVS = [(0, 64, 3), (2, 64, 64), (5, 128, 64), (7, 128, 128), (10, 256, 128),
          (12, 256, 256), (14, 256, 256), (17, 512, 256), (19, 512, 512), (21, 512, 512),
          (24, 512, 512), (26, 512, 512), (28, 512, 512)]
_FCS = [(0, 4096, 25088), (3, 4096, 4096), (6, 1000, 4096)]


def _torchvision_shapes():
    shapes = {}
    for index, out, inp in _CONVS:
        shapes[f'features.{index}.weight'] = (out, inp, 3, 3)
        shapes[f'features.{index}.bias'] = (out,)
    for index, out, inp in _FCS:
        shapes[f'classifier.{index}.weight'] = (out, inp)
        shapes[f'classifier.{index}.bias'] = (out,)
    return shapes


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


@pytest.fixture(scope='module')
def model():
    # NOTE: zeros, since drawing 138M random numbers takes seconds; shapes are what matter
    return vgg16.VGG16(n_class=5, initialW=initializers.Zero(),
                       initial_bias=initializers.Constant(0.01))


def test_layers_pick_and_adaptive_pool(model):
    assert model.layer_names[:3] == ['conv1_1', 'conv1_2', 'pool1']
    assert model.layer_names[-1] == 'fc8'
    model.pick = ('conv5_3', 'pool5', 'fc7', 'fc8')
    for size, conv5 in (((64, 64), (4, 4)), ((224, 224), (14, 14)), ((40, 72), (2, 4))):
        h = _forward(model, numpy.ones((1, 3) + size, numpy.float32))
        assert [v.shape for v in h] == [(1, 512) + conv5, (1, 512, 7, 7), (1, 4096), (1, 5)]
    model.pick = 'fc8'


def test_adaptive_pool_bins_match_torchvision():
    x = numpy.arange(2 * 3 * 10 * 9, dtype=numpy.float32).reshape(2, 3, 10, 9)
    y = vgg16._adaptive_average_pooling_7x7(x).array
    expected = numpy.empty((2, 3, 7, 7), numpy.float32)
    for i in range(7):
        for j in range(7):
            rows = slice(i * 10 // 7, -(-(i + 1) * 10 // 7))
            cols = slice(j * 9 // 7, -(-(j + 1) * 9 // 7))
            expected[:, :, i, j] = x[:, :, rows, cols].mean(axis=(2, 3))
    numpy.testing.assert_allclose(y, expected, rtol=1e-6)


def test_predict_reset_head_and_device(model):
    model.preset = zoo.Preset(size=32, mean=(120.0, 115.0, 100.0), crop_fraction=0.875)
    rng = numpy.random.default_rng(0)
    imgs = [rng.uniform(0, 255, (3, 40, 50)).astype(numpy.float32),
            rng.integers(0, 256, (60, 35, 3), dtype=numpy.uint8)]
    assert_is_classification_model(model, imgs, 5)
    model.reset_head(2)
    assert model.fc8.W.shape == (2, 4096)
    assert_is_classification_model(model.to_device('cpu'), imgs, 2)
    model.reset_head(5)


def test_torchvision_mapping_covers_the_real_architecture(model):
    # NOTE: zero-stride views: the real shapes without 550 MB of memory
    raw = {k: numpy.broadcast_to(numpy.float32(0), s) for k, s in _torchvision_shapes().items()}
    arrays = model.convert_weights(raw, 'torchvision')
    own = {name.lstrip('/'): p.shape for name, p in model.namedparams()}
    own['fc8/W'], own['fc8/b'] = (1000, 4096), (1000,)
    assert {k: v.shape for k, v in arrays.items()} == own
    assert arrays['conv3_3/conv/W'] is raw['features.14.weight']
    assert arrays['fc7/b'] is raw['classifier.3.bias']


def test_unknown_torchvision_keys_are_named(model):
    raw = {'features.1.weight': numpy.zeros(1), 'classifier.9.bias': numpy.zeros(1),
           'features.0.bias': numpy.zeros(1)}
    with pytest.raises(errors.WeightLoadError, match='classifier.9.bias, features.1.weight'):
        model.convert_weights(raw, 'torchvision')
    with pytest.raises(ValueError, match='source: expected'):
        model.convert_weights(raw, 'darknet')


def test_compat_follows_the_weights_and_sets_cover_all(model, monkeypatch):
    assert model.compat == 'torchvision'
    chainercv = vgg16.VGG16(n_class=5, compat='chainercv', initialW=initializers.Zero())
    # 200 -> 100 -> 50 -> 25 -> 13 -> 7 with the window over the edge (ChainerCV's fc6
    # input), 25 -> 12 -> 6 without it.
    chainercv.pick = model.pick = ('pool4', 'pool5')
    x = numpy.ones((1, 3, 200, 200), numpy.float32)
    shapes = [[h.shape[2:] for h in _forward(m, x)] for m in (chainercv, model)]
    assert shapes == [[(13, 13), (7, 7)], [(12, 12), (7, 7)]]
    model.pick = 'fc8'
    # NOTE: the weights are not loaded here; only the layout the arguments choose.
    monkeypatch.setattr(vgg16.VGG16, '_load_pretrained', lambda *args: None)
    assert vgg16.VGG16(pretrained_model='imagenet_chainercv').compat == 'chainercv'
    assert vgg16.VGG16(pretrained_model='imagenet').compat == 'torchvision'
    assert vgg16.VGG16(pretrained_model='x.npz', source='chainercv').compat == 'chainercv'
    with pytest.raises(ValueError, match='compat'):
        vgg16.VGG16(compat='caffe')


def test_chainercv_names_pass_through(model):
    raw = {'/conv1_1/conv/W': numpy.zeros(1), 'fc8/b': numpy.zeros(1)}
    assert sorted(model.convert_weights(raw, 'chainercv')) == ['conv1_1/conv/W', 'fc8/b']


@pytest.mark.slow
def test_load_a_full_torchvision_file(tmp_path):
    rng = numpy.random.default_rng(1)
    state = {k: rng.standard_normal(s, dtype=numpy.float32) * 0.01
             for k, s in _torchvision_shapes().items()}
    pth_writer.write_state_dict(tmp_path / 'vgg16.pth', state)
    model = vgg16.VGG16(pretrained_model=tmp_path / 'vgg16.pth')
    numpy.testing.assert_array_equal(model.conv5_3.conv.W.array, state['features.28.weight'])
    numpy.testing.assert_array_equal(model.fc6.W.array, state['classifier.0.weight'])
