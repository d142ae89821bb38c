"""Tests of SegNetBasic: shapes, unpooling, predict(), head re-make, ChainerCV .npz."""

import numpy
import pytest

from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.segmentation.segnet import segnet_basic
from cvzoo.testing import assert_is_semantic_segmentation_model


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


SIZES = {'multiple_of_16': (32, 48), 'odd': (37, 53), 'tiny': (3, 5)}


@pytest.mark.parametrize('size', list(SIZES.values()), ids=list(SIZES))
def test_forward_shape(size, rng):
    model = segnet_basic.SegNetBasic(n_class=4)
    y = _forward(model, rng.uniform(0, 255, (2, 3) + size).astype(numpy.float32))
    expected = tuple(-(-n // 16) * 16 if n % 16 else n for n in size)
    # NOTE: cover_all pooling rounds each halving up; the decoder crops back per stage.
    assert y.shape[:2] == (2, 4) and y.dtype == numpy.float32
    assert all(n <= out <= e for n, out, e in zip(size, y.shape[2:], expected))


def test_unpool_puts_values_back_at_the_maxima(rng):
    import cvzoo.core.functions as F

    x = rng.uniform(0.1, 1, (1, 2, 6, 6)).astype(numpy.float32)  # the zeros never win
    pooled, indexes = F.max_pooling_2d(x, 2, 2, return_indices=True)
    padded = numpy.zeros((1, 2, 4, 4), numpy.float32)
    padded[:, :, :3, :3] = pooled.array
    y = segnet_basic._unpool(padded, indexes).array
    assert y.shape == (1, 2, 6, 6)
    for c in range(2):
        for i in range(3):
            for j in range(3):
                window = x[0, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                out = y[0, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                assert out.max() == window.max() and (out != 0).sum() == 1
                assert out.argmax() == window.argmax()


def test_predict_contract_at_each_image_size(rng):
    model = segnet_basic.SegNetBasic(n_class=11)
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for size in ((16, 32), (16, 32), (21, 13))]
    assert_is_semantic_segmentation_model(model, imgs, 11)
    x = imgs[0][None]
    expected = _forward(model, x).array[0].argmax(axis=0)
    numpy.testing.assert_array_equal(model.predict(imgs[:1])[0], expected)


def test_reset_head_and_errors():
    model = segnet_basic.SegNetBasic(n_class=11)
    conv4 = model.conv4.W.array.copy()
    model.reset_head(3)
    assert model.n_class == 3 and model.conv_classifier.W.shape == (3, 64, 1, 1)
    numpy.testing.assert_array_equal(model.conv4.W.array, conv4)
    with pytest.raises(ValueError, match='n_class'):
        segnet_basic.SegNetBasic()
    with pytest.raises(ValueError, match='n_class'):
        model.reset_head(0)


def _chainercv_npz(path, rng, n_class):
    """A .npz with ChainerCV's SegNetBasic names (Chainer's save_npz layout)."""
    arrays = {}
    for k, name in enumerate(segnet_basic.SegNetBasic._stage_names()):
        arrays[f'{name}/W'] = rng.standard_normal((64, 3 if k == 0 else 64, 7, 7)).astype('f')
        for leaf in ('gamma', 'beta', 'avg_mean', 'avg_var'):
            arrays[f'{name}_bn/{leaf}'] = rng.uniform(0.5, 1.5, 64).astype('f')
        arrays[f'{name}_bn/N'] = numpy.array(0)
    arrays['conv_classifier/W'] = rng.standard_normal((n_class, 64, 1, 1)).astype('f')
    arrays['conv_classifier/b'] = rng.standard_normal(n_class).astype('f')
    numpy.savez(path, **arrays)
    return arrays


def test_load_a_chainercv_npz(tmp_path, rng):
    arrays = _chainercv_npz(tmp_path / 'segnet.npz', rng, 11)
    model = segnet_basic.SegNetBasic(n_class=11, pretrained_model=tmp_path / 'segnet.npz')
    numpy.testing.assert_array_equal(model.conv_decode2.W.array, arrays['conv_decode2/W'])
    numpy.testing.assert_array_equal(model.conv3_bn.avg_var, arrays['conv3_bn/avg_var'])
    numpy.testing.assert_array_equal(model.conv_classifier.b.array, arrays['conv_classifier/b'])


def test_zoo_entry():
    assert 'segnet_basic' in zoo.list_models('semantic_segmentation')
    entry = segnet_basic.SegNetBasic.weights['camvid']
    assert zoo.schema_problems(entry) == []
    assert entry.sha256 == zoo.UNPUBLISHED and entry.n_class == 11
    assert entry.url.endswith('segnet_camvid_trained_2018_12_05.npz')
    assert entry.reported == zoo.Score('miou', 0.494, 'camvid_test', entry.reported.source)
    assert entry.label_names[0] == 'Sky' and entry.convert_from == 'chainercv'


def test_zoo_key_loads_and_remakes_the_head(tmp_path, rng, monkeypatch):
    arrays = _chainercv_npz(tmp_path / 'segnet.npz', rng, 11)
    monkeypatch.setattr(zoo, 'fetch_weights', lambda entry: [str(tmp_path / 'segnet.npz')])
    model = segnet_basic.SegNetBasic(pretrained_model='camvid')
    assert model.n_class == 11 and model.label_names[0] == 'Sky'
    numpy.testing.assert_array_equal(model.conv1.W.array, arrays['conv1/W'])
    model = segnet_basic.SegNetBasic(n_class=4, pretrained_model='camvid')
    assert model.conv_classifier.W.shape == (4, 64, 1, 1) and model.label_names is None
    numpy.testing.assert_array_equal(model.conv_decode1.W.array, arrays['conv_decode1/W'])


def test_rooted_names_and_unknown_source(tmp_path, rng):
    arrays = _chainercv_npz(tmp_path / 'plain.npz', rng, 11)
    numpy.savez(tmp_path / 'rooted.npz', **{'/' + k: v for k, v in arrays.items()})
    model = segnet_basic.SegNetBasic(n_class=11)
    converted = model.convert_weights(dict(numpy.load(tmp_path / 'rooted.npz')), 'chainercv')
    assert set(converted) == set(arrays)
    with pytest.raises(ValueError, match='source'):
        model.convert_weights({}, 'torch')
