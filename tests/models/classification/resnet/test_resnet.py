"""ResNet-50/101/152 and ResNeXt-50: shapes, pick, predict, heads, weight loading."""

import numpy
import PIL.Image
import pytest

from cvzoo import errors
from cvzoo.core import config, initializers
from cvzoo.models import zoo
from cvzoo.models.classification.resnet import resnet, resnext
from cvzoo.testing import assert_is_classification_model
from tests.helpers import classifier_weight_files, pth_writer

SMALL = zoo.Preset(size=64, mean=(120.0, 115.0, 100.0), std=(60.0, 60.0, 60.0),
                   crop_fraction=0.875)


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


@pytest.fixture(scope='module', params=['fb', 'he'])
def resnet50(request):
    return resnet.ResNet50(n_class=10, arch=request.param)


def test_output_shapes_and_pick(resnet50):
    x = numpy.random.default_rng(0).uniform(-1, 1, (2, 3, 64, 64)).astype(numpy.float32)
    resnet50.pick = 'fc6'
    assert _forward(resnet50, x).shape == (2, 10)
    resnet50.pick = ('conv1', 'pool1', 'res2', 'res3', 'res4', 'res5', 'pool5')
    shapes = [h.shape for h in _forward(resnet50, x)]
    assert shapes == [(2, 64, 32, 32), (2, 64, 16, 16), (2, 256, 16, 16), (2, 512, 8, 8),
                      (2, 1024, 4, 4), (2, 2048, 2, 2), (2, 2048)]
    resnet50.pick = 'fc6'


def test_arch_moves_the_stride(resnet50):
    a = resnet50.res3.a
    strides = (a.conv1.conv.stride, a.conv2.conv.stride)
    assert strides == ((2, 1) if resnet50.arch == 'he' else (1, 2))
    assert (resnet50.conv1.conv.b is not None) == (resnet50.arch == 'he')
    assert resnet50.compat == ('chainercv' if resnet50.arch == 'he' else 'torchvision')


def test_predict_on_each_input_kind(resnet50, tmp_path):
    rng = numpy.random.default_rng(1)
    resnet50.preset = SMALL
    hwc = rng.integers(0, 256, (50, 70, 3), dtype=numpy.uint8)
    PIL.Image.fromarray(hwc).save(tmp_path / 'img.png')
    chw = rng.uniform(0, 255, (3, 80, 60)).astype(numpy.float32)
    imgs = [chw, hwc, PIL.Image.fromarray(hwc), str(tmp_path / 'img.png')]
    assert_is_classification_model(resnet50, imgs, 10)
    probs = resnet50.predict(imgs)
    numpy.testing.assert_allclose(probs[1], probs[2], rtol=1e-4, atol=1e-7)  # same image, two kinds
    numpy.testing.assert_allclose(probs[1], probs[3], rtol=1e-4, atol=1e-7)
    assert resnet50.to_device('cpu') is resnet50


def test_reset_head_and_n_class_change(resnet50):
    resnet50.reset_head(3)
    assert resnet50.fc6.W.shape == (3, 2048) and resnet50.layer_names[-1] == 'fc6'
    x = numpy.zeros((1, 3, 64, 64), numpy.float32)
    assert _forward(resnet50, x).shape == (1, 3)
    resnet50.reset_head(10)


def test_resnext_groups_and_shapes():
    model = resnext.ResNeXt50_32x4d(n_class=5, initialW=initializers.Zero())
    assert model.res2.a.conv2.conv.W.shape == (128, 4, 3, 3)
    assert model.res5.b2.conv3.conv.W.shape == (2048, 1024, 1, 1)
    assert _forward(model, numpy.zeros((1, 3, 32, 32), numpy.float32)).shape == (1, 5)


@pytest.mark.parametrize('call, message', [
    (lambda: resnet.ResNet50(pretrained_model='imagenet', arch='he'),
     r"weights 'imagenet' of ResNet50 need arch='fb'.*\['imagenet_he'\]"),
    (lambda: resnet.ResNet50(pretrained_model='imagenet_he', arch='fb'), "need arch='he'"),
    (lambda: resnet.ResNet50(arch='caffe'), 'arch: expected one of'),
    (lambda: resnet.ResNet50(compat='keras'), 'compat: expected one of'),
    (lambda: resnet.ResNet(34), 'n_layer: expected one of'),
], ids=['key_fb_arch_he', 'key_he_arch_fb', 'bad_arch', 'bad_compat', 'bad_n_layer'])
def test_argument_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_every_key_names_its_arch():
    for cls in (resnet.ResNet50, resnet.ResNet101, resnet.ResNet152, resnext.ResNeXt50_32x4d):
        for key, entry in cls.weights.items():
            assert key in resnet.KEY_ARCHS
            assert entry.convert_from == ('chainercv' if 'chainercv' in entry.url
                                          else 'torchvision')
            assert zoo.schema_problems(entry) == []


def _torchvision_to_expected(state):
    """A few cvzoo keys and the torchvision arrays that must land in them."""
    return {'conv1/conv/W': state['conv1.weight'], 'conv1/bn/avg_var': state['bn1.running_var'],
            'res2/a/residual_conv/conv/W': state['layer1.0.downsample.0.weight'],
            'res3/b3/conv2/bn/gamma': state['layer2.3.bn2.weight'],
            'res5/b2/conv3/bn/avg_mean': state['layer4.2.bn3.running_mean'],
            'fc6/W': state['fc.weight'], 'fc6/b': state['fc.bias']}


def _param(model, key):
    obj = model
    for part in key.split('/'):
        obj = getattr(obj, part)
    return getattr(obj, 'array', obj)


@pytest.mark.parametrize('arch', ['fb', 'he'])
def test_load_torchvision_pth(tmp_path, arch):
    rng = numpy.random.default_rng(2)
    state = classifier_weight_files.torchvision_resnet_state(rng, conv1_bias=arch == 'he')
    pth_writer.write_state_dict(tmp_path / 'r50.pth', state)
    model = resnet.ResNet50(pretrained_model=tmp_path / 'r50.pth', arch=arch)
    for key, value in _torchvision_to_expected(state).items():
        numpy.testing.assert_array_equal(_param(model, key), value, err_msg=key)
    assert model.res5.b2.conv3.bn.N == 0


def test_load_chainercv_npz_and_fine_tune_head(tmp_path):
    rng = numpy.random.default_rng(3)
    source = resnet.ResNet50(arch='he', initialW=initializers.Zero())
    arrays = classifier_weight_files.randomize(classifier_weight_files.model_arrays(source), rng)
    for key in ('conv1/conv/b', 'res2/a/residual_conv/bn/avg_mean', 'res4/b5/conv1/conv/W'):
        assert key in arrays  # ChainerCV's names
    numpy.savez(tmp_path / 'r50_he.npz', **{'/' + k: v for k, v in arrays.items()})
    model = resnet.ResNet50(pretrained_model=tmp_path / 'r50_he.npz', arch='he',
                            source='chainercv')
    assert model.compat == 'chainercv' and model.pool1.keywords['cover_all']
    for key in ('conv1/conv/b', 'res4/b5/conv1/conv/W', 'fc6/W'):
        numpy.testing.assert_array_equal(_param(model, key), arrays[key])


def test_wrong_file_reports_every_key(tmp_path):
    rng = numpy.random.default_rng(4)
    state = classifier_weight_files.torchvision_resnet_state(rng, n_class=7)
    del state['layer3.1.conv2.weight']
    state['layer2.0.conv1.weight'] = state['layer2.0.conv1.weight'][:, :10]
    pth_writer.write_state_dict(tmp_path / 'bad.pth', state)
    with pytest.raises(errors.WeightLoadError) as info:
        resnet.ResNet50(pretrained_model=tmp_path / 'bad.pth')
    message = str(info.value)
    for part in ('missing: res4/b1/conv2/conv/W', 'res3/a/conv1/conv/W (file (128, 10, 1, 1)',
                 'fc6/W (file (7, 2048)', 'bad.pth'):
        assert part in message, message
    state['head.weight'] = state.pop('fc.weight')
    state['layer1.0.extra.weight'] = state['fc.bias']
    pth_writer.write_state_dict(tmp_path / 'foreign.pth', state)
    with pytest.raises(errors.WeightLoadError, match='head.weight, layer1.0.extra.weight'):
        resnet.ResNet50(pretrained_model=tmp_path / 'foreign.pth')


def test_zoo_key_with_other_n_class_loads_all_but_the_head(tmp_path, monkeypatch):
    rng = numpy.random.default_rng(5)
    state = classifier_weight_files.torchvision_resnet_state(rng)
    pth_writer.write_state_dict(tmp_path / 'resnet50-0676ba61.pth', state)
    monkeypatch.setattr(zoo, 'fetch_weights', lambda entry: [str(tmp_path / entry.main_file.file_name)])
    model = resnet.ResNet50(n_class=4, pretrained_model='imagenet')
    assert model.fc6.W.shape == (4, 2048) and model.label_names is None
    numpy.testing.assert_array_equal(model.conv1.conv.W.array, state['conv1.weight'])
    assert model.preset == resnet.ResNet50.weights['imagenet'].preset

