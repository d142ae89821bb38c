"""SE-ResNet and SE-ResNeXt: SE blocks, fixed arch, shapes, pick, ChainerCV npz loading."""

import numpy
import pytest

from cvzoo.core import config, initializers
from cvzoo.models import zoo
from cvzoo.models.classification.resnet import se_resnet, se_resnext
from cvzoo.testing import assert_is_classification_model
from tests.helpers import classifier_weight_files


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


@pytest.fixture(scope='module')
def se_resnet50():
    return se_resnet.SEResNet50(n_class=6)


def test_se_resnet50_layout_shapes_and_pick(se_resnet50):
    model = se_resnet50
    assert (model.arch, model.compat) == ('he', 'chainercv')
    assert model.res3.a.conv1.conv.stride == 2 and model.conv1.conv.b is None
    assert model.res4.b2.se.down.W.shape == (64, 1024)
    model.pick = ('res2', 'res5', 'fc6')
    shapes = [h.shape for h in _forward(model, numpy.ones((1, 3, 64, 64), numpy.float32))]
    assert shapes == [(1, 256, 16, 16), (1, 2048, 2, 2), (1, 6)]
    model.pick = 'fc6'


def test_se_resnet50_predict(se_resnet50):
    se_resnet50.preset = zoo.Preset(size=48, mean=(120.0, 115.0, 100.0), crop_fraction=0.875)
    rng = numpy.random.default_rng(0)
    imgs = [rng.uniform(0, 255, (3, 50, 70)).astype(numpy.float32),
            rng.integers(0, 256, (90, 40, 3), dtype=numpy.uint8)]
    assert_is_classification_model(se_resnet50, imgs, 6)


def test_se_resnet50_loads_a_chainercv_npz(se_resnet50, tmp_path):
    rng = numpy.random.default_rng(1)
    arrays = classifier_weight_files.randomize(
        classifier_weight_files.model_arrays(se_resnet50), rng)
    for key in ('res2/a/se/down/W', 'res2/a/se/up/b', 'res5/b2/se/up/W'):
        assert key in arrays  # ChainerCV's SEBlock names
    numpy.savez(tmp_path / 'se.npz', **arrays)
    model = se_resnet.SEResNet50(n_class=6, pretrained_model=tmp_path / 'se.npz',
                                 source='chainercv')
    numpy.testing.assert_array_equal(model.res5.b2.se.up.W.array, arrays['res5/b2/se/up/W'])
    x = numpy.random.default_rng(2).uniform(-1, 1, (1, 3, 32, 32)).astype(numpy.float32)
    se_resnet50.to_device('cpu')
    for name, value in arrays.items():  # the source model takes the same values
        parts = name.split('/')
        link = se_resnet50
        for part in parts[:-1]:
            link = getattr(link, part)
        target = getattr(link, parts[-1])
        if isinstance(target, numpy.ndarray):
            target[...] = value
        elif hasattr(target, 'array'):
            target.array[...] = value
    numpy.testing.assert_allclose(_forward(model, x).array, _forward(se_resnet50, x).array,
                                  rtol=1e-5, atol=1e-6)


def test_se_resnext50_shapes_and_arch():
    model = se_resnext.SEResNeXt50(n_class=3, initialW=initializers.Zero())
    assert (model.arch, model.compat) == ('fb', 'chainercv')
    assert model.res2.a.conv2.conv.W.shape == (128, 4, 3, 3)
    assert model.res3.a.conv2.conv.stride == 2
    assert _forward(model, numpy.ones((1, 3, 32, 32), numpy.float32)).shape == (1, 3)


def test_fixed_arch_is_enforced():
    with pytest.raises(ValueError, match="SEResNet50 exists only with arch='he'"):
        se_resnet.SEResNet50(arch='fb')


@pytest.mark.parametrize('name', ['se_resnet50', 'se_resnet101', 'se_resnet152',
                                  'se_resnext50', 'se_resnext101'])
def test_entries(name):
    entry = zoo.resolve_weights(zoo.get_model_class(name), 'imagenet')
    assert entry.sha256 == zoo.UNPUBLISHED and entry.convert_from == 'chainercv'
    assert entry.url.startswith('https://chainercv-models.preferred.jp/' + name)
    assert zoo.schema_problems(entry) == []
