"""Tests of ESPNet: shapes, predict(), the head re-make and the weight conversion."""

import dataclasses
import shutil

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.segmentation.espnet import espnet
from cvzoo.models.weights.converters import file_format
from cvzoo.testing import assert_is_semantic_segmentation_model
from tests.helpers import espnet_keys, pth_writer

REAL_FILE = 'weights/espnet_p_2_q_8_camvid.pth'


def _small(model, size=(24, 32)):
    model.preset = dataclasses.replace(model.preset, size=size)
    return model


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


SIZES = {'multiple_of_8': (24, 40), 'odd': (37, 53), 'tiny': (5, 3), 'one_odd_side': (16, 9)}


@pytest.mark.parametrize('size', list(SIZES.values()), ids=list(SIZES))
def test_forward_keeps_the_input_size(size, rng):
    model = espnet.ESPNet(n_class=5)
    x = rng.standard_normal((2, 3) + size).astype(numpy.float32)
    y = _forward(model, x)
    assert y.shape == (2, 5) + size and y.dtype == numpy.float32


def test_void_channel_adds_one_output_that_predict_ignores(rng):
    model = espnet.ESPNet(n_class=5, void_channel=True)
    assert _forward(model, numpy.zeros((1, 3, 16, 16), numpy.float32)).shape[1] == 6
    # NOTE: the void channel wins everywhere: the labels must still be 0..4.
    score = numpy.zeros((1, 6, 16, 16), numpy.float32)
    score[:, 5] = 10
    score[:, 2, :4] = 1
    label = model.scores_to_label(score, (16, 16))
    assert label.dtype == numpy.int32 and label.shape == (16, 16)
    assert (label[:4] == 2).all() and (label[4:] == 0).all()


@pytest.mark.parametrize('n_class', [4, 2.5, None], ids=['too_few', 'float', 'none'])
def test_n_class_errors(n_class):
    with pytest.raises(ValueError, match='n_class'):
        espnet.ESPNet(n_class=n_class)


def test_predict_contract_on_several_sizes(rng):
    model = _small(espnet.ESPNet(n_class=11, void_channel=True))
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for size in ((24, 32), (37, 53), (7, 11))]
    imgs.append(rng.integers(0, 255, (30, 20, 3), dtype=numpy.uint8))  # HWC uint8
    assert_is_semantic_segmentation_model(model, imgs, 11)


def test_predict_matches_forward_at_the_preset_size(rng):
    model = _small(espnet.ESPNet(n_class=5), size=(16, 24))
    img = rng.uniform(0, 255, (3, 16, 24)).astype(numpy.float32)
    x = model.prepare(img)
    mean = numpy.asarray(model.preset.mean, numpy.float32)[::-1, None, None]
    std = numpy.asarray(model.preset.std, numpy.float32)[::-1, None, None]
    numpy.testing.assert_allclose(x, (img[::-1] - mean) / std, rtol=1e-6)  # BGR
    expected = _forward(model, x[None]).array[0].argmax(axis=0)
    numpy.testing.assert_array_equal(model.predict([img], batchsize=1)[0], expected)


def test_reset_head_changes_the_classes(rng):
    model = espnet.ESPNet(n_class=11, void_channel=True)
    level1 = model.encoder.level1.conv.W.array.copy()
    model.reset_head(5)
    assert model.n_class == 5 and not model.void_channel
    assert model.encoder.classifier.W.shape == (5, 256, 1, 1)
    assert model.conv.conv.W.shape == (5, 19 + 5, 3, 3)
    numpy.testing.assert_array_equal(model.encoder.level1.conv.W.array, level1)
    assert _forward(model, numpy.zeros((1, 3, 8, 8), numpy.float32)).shape == (1, 5, 8, 8)


def test_torch_name_examples():
    assert espnet.torch_name('encoder/level1/bn/avg_var') == 'encoder.level1.bn.running_var'
    assert espnet.torch_name('encoder/level3_0/c1/W') == 'encoder.level3_0.c1.conv.weight'
    assert espnet.torch_name('encoder/classifier/W') == 'encoder.classifier.conv.weight'
    assert espnet.torch_name('combine_esp/br/act/W') == 'combine_l2_l3.1.bn.act.weight'
    assert espnet.torch_name('up_l2_br/bn/beta') == 'up_l2.1.bn.bias'
    assert espnet.torch_name('classifier/W') == 'classifier.weight'
    assert espnet.torch_name('bn_l3/N') is None


def _fake_state(rng, n_out=12):
    shapes = espnet_keys.espnet_state_shapes(n_out)
    return {name: rng.uniform(0.5, 1.5, shape).astype(numpy.float32)
            for name, shape in shapes.items()}


def test_convert_a_written_pth_consumes_every_key(tmp_path, rng):
    state = _fake_state(rng)
    path = tmp_path / 'espnet.pth'
    pth_writer.write_state_dict(path, state, layout='legacy')
    model = espnet.ESPNet(n_class=11, pretrained_model=path, void_channel=True)
    checks = {'encoder/level2/1/d8/W': 'encoder.level2.1.d8.conv.weight',
              'encoder/b3/bn/avg_mean': 'encoder.b3.bn.running_mean',
              'combine_br/act/W': 'combine_l2_l3.0.act.weight',
              'up_l3/W': 'up_l3.0.weight', 'proj_l2/W': 'level3_C.conv.weight',
              'bn_l3/gamma': 'br.weight', 'conv/bn/avg_var': 'conv.bn.running_var'}
    params = dict(model.namedparams())
    for cvzoo_path, torch_key in checks.items():
        link_path, leaf = cvzoo_path.rsplit('/', 1)
        value = params.get('/' + cvzoo_path)
        value = value.array if value is not None else getattr(
            _link(model, link_path), leaf)
        numpy.testing.assert_array_equal(value, state[torch_key], err_msg=cvzoo_path)


def _link(model, path):
    for name in path.split('/'):
        model = model[int(name)] if name.isdigit() else getattr(model, name)
    return model


@pytest.mark.parametrize('change', ['extra', 'missing'], ids=['extra_key', 'missing_key'])
def test_convert_names_leftover_and_missing_keys(change, rng):
    state = _fake_state(rng)
    if change == 'extra':
        state['encoder.level4.weight'] = numpy.zeros(3, numpy.float32)
    else:
        del state['up_l2.1.act.weight']
    model = espnet.ESPNet(n_class=11, void_channel=True)
    name = 'encoder.level4.weight' if change == 'extra' else 'up_l2.1.act.weight'
    with pytest.raises(errors.WeightLoadError, match=name.replace('.', r'\.')):
        model.convert_weights(state, 'torch')
    with pytest.raises(ValueError, match='source'):
        model.convert_weights(state, 'chainercv')


def test_key_with_other_n_class_remakes_the_head(tmp_path, rng,
                                                  monkeypatch):
    state = _fake_state(rng)
    path = tmp_path / 'espnet_p_2_q_8_camvid.pth'
    pth_writer.write_state_dict(path, state, layout='legacy')
    monkeypatch.setattr(zoo, 'fetch_weights', lambda weights: [str(path)])
    model = espnet.ESPNet(pretrained_model='camvid')
    assert model.n_class == 11 and model.void_channel and len(model.label_names) == 11
    numpy.testing.assert_array_equal(model.classifier.W.array, state['classifier.weight'])
    model = espnet.ESPNet(n_class=6, pretrained_model='camvid')
    assert model.n_class == 6 and not model.void_channel and model.label_names is None
    assert model.classifier.W.shape == (6, 6, 2, 2)
    numpy.testing.assert_array_equal(model.encoder.level3[7].c1.W.array,
                                     state['encoder.level3.7.c1.conv.weight'])


def test_weights_entry_follows_the_schema():
    entry = espnet.ESPNet.weights['camvid']
    assert zoo.schema_problems(entry) == []
    assert entry.url.startswith('https://github.com/sacmehta/ESPNet/raw/afe71c3')
    assert 'espnet' in zoo.list_models('semantic_segmentation')


def test_real_file_keys_and_shapes(shared_data):
    raw = file_format.read_weight_file(shared_data / REAL_FILE)
    expected = espnet_keys.espnet_state_shapes()
    assert {k: tuple(v.shape) for k, v in raw.items()} == dict(expected)
    arrays = espnet.ESPNet(n_class=11, void_channel=True).convert_weights(raw, 'torch')
    assert len([k for k in arrays if not k.endswith('/N')]) == len(raw) == 189


# Pixel accuracy (void pixels excluded) of the first two CamVid test images, measured
# here with the real weights (the third is 0.89601).
FIRST_ACCURACIES = (0.9424653834822744, 0.9270659534792424)


def test_first_camvid_test_images(shared_data, tmp_path):
    from cvzoo.datasets import CamVidDataset

    path = tmp_path / 'espnet.pth'
    shutil.copy(shared_data / REAL_FILE, path)
    model = espnet.ESPNet(n_class=11, pretrained_model=path, void_channel=True)
    dataset = CamVidDataset(shared_data / 'camvid', 'test')
    imgs, gt_labels = zip(*[dataset[i] for i in range(len(FIRST_ACCURACIES))])
    for label, gt_label, expected in zip(model.predict(imgs), gt_labels, FIRST_ACCURACIES):
        assert label.shape == (360, 480)
        keep = gt_label >= 0
        assert (label[keep] == gt_label[keep]).mean() == pytest.approx(expected, abs=2e-4)
