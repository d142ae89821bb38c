"""Tests of DeepLab V3+ on Xception-65: shapes, preprocessing, predict() with scales and
flip, head re-make, ChainerCV weights, zoo entries."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.segmentation.deeplab import deeplab_v3_plus
from cvzoo.testing import assert_is_semantic_segmentation_model

MIN_INPUT_SIZE = 33  # reduced from 513; odd, as the padding of the weights' presets gives


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)  # NOTE: the same random weights whatever ran before
    return deeplab_v3_plus.DeepLabV3plusXception65(n_class=5, min_input_size=MIN_INPUT_SIZE)


def _no_graph():
    return config.using_config('train', False), config.no_backprop_mode()


def _probabilities_by_hand(model, img):
    """softmax(forward(prepare(img))) resized to the padded size, cropped to the image."""
    x = model.prepare(img)[None]
    train, backprop = _no_graph()
    with train, backprop:
        logits = model(x).array
    e = numpy.exp(logits - logits.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    prob = F.resize_images(prob, x.shape[2:], align_corners=True).array
    return prob[0, :, :img.shape[1], :img.shape[2]]


def test_forward_and_feature_strides(model):
    x = numpy.zeros((1, 3, 33, 33), numpy.float32)
    train, backprop = _no_graph()
    with train, backprop:
        lowlevel, highlevel = model.feature_extractor(x)
        y = model(x)
    # NOTE: 33 -> 17 -> 9 (stride 4, low level) -> 5 (stride 8, high level).
    assert lowlevel.shape == (1, 256, 9, 9) and highlevel.shape == (1, 2048, 5, 5)
    assert y.shape == (1, 5, 9, 9) and y.dtype == numpy.float32


def test_prepare_scales_to_minus_one_one_and_pads_bottom_right(model, rng):
    img = rng.uniform(0, 255, (3, 20, 40)).astype(numpy.float32)
    x = model.prepare(img)
    assert x.shape == (3, 33, 40)
    numpy.testing.assert_allclose(x[:, :20], img / 127.5 - 1, rtol=1e-6, atol=1e-6)
    assert (x[:, 20:] == 0).all()  # NOTE: zero after scaling is ChainerCV's 127.5 padding


def test_predict_contract_and_the_forward_by_hand(model, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for size in ((20, 26), (40, 45))]
    assert_is_semantic_segmentation_model(model, imgs, 5)
    expected = _probabilities_by_hand(model, imgs[0]).argmax(axis=0)
    numpy.testing.assert_array_equal(model.predict(imgs[:1])[0], expected)


def test_flip_and_scales_average_the_probabilities(model, rng):
    img = rng.uniform(0, 255, (3, 24, 30)).astype(numpy.float32)
    plain = _probabilities_by_hand(model, img)
    mirrored = _probabilities_by_hand(model, numpy.ascontiguousarray(img[:, :, ::-1]))
    model.flip, model.scales = True, (1.0, 0.5)
    try:
        train, backprop = _no_graph()
        with train, backprop:
            both = model.scores(img)
            model.scales = (1.0,)
            flipped = model.scores(img)
    finally:
        model.flip, model.scales = False, (1.0,)
    numpy.testing.assert_allclose(flipped, (plain + mirrored[:, :, ::-1]) / 2, rtol=1e-4,
                                  atol=1e-6)
    assert not numpy.allclose(flipped, plain, atol=1e-6)
    half = deeplab_v3_plus._resize(img, (12, 15))
    half_prob = (_probabilities_by_hand(model, half)
                 + _probabilities_by_hand(model, numpy.ascontiguousarray(half[:, :, ::-1]))
                 [:, :, ::-1]) / 2
    expected = (flipped + deeplab_v3_plus._resize(half_prob, (24, 30))) / 2
    numpy.testing.assert_allclose(both, expected, rtol=1e-4, atol=1e-6)


def test_reset_head_and_argument_errors(model):
    logits = model.decoder.conv_logits
    model.reset_head(3)
    try:
        assert model.n_class == 3 and model.decoder.conv_logits.W.shape == (3, 256, 1, 1)
    finally:
        model.decoder.conv_logits, model.n_class = logits, 5
    cls = deeplab_v3_plus.DeepLabV3plusXception65
    with pytest.raises(ValueError, match='n_class'):
        cls()
    with pytest.raises(ValueError, match='min_input_size'):
        cls(n_class=2, min_input_size=(0, 3))
    with pytest.raises(ValueError, match='scales'):
        cls(n_class=2, scales=(1.0, -0.5))


def _conv_bn(prefix, out_channels, in_channels, ksize=1):
    shapes = {f'{prefix}/conv/W': (out_channels, in_channels, ksize, ksize)}
    shapes.update({f'{prefix}/bn/{leaf}': (out_channels,)
                   for leaf in ('gamma', 'beta', 'avg_mean', 'avg_var')})
    shapes[f'{prefix}/bn/N'] = ()
    return shapes


def _separable(prefix, out_channels, in_channels):
    shapes = {f'{prefix}/depthwise/W': (in_channels, 1, 3, 3),
              f'{prefix}/pointwise/W': (out_channels, in_channels, 1, 1)}
    for bn, channels in (('dw_bn', in_channels), ('pw_bn', out_channels)):
        shapes.update({f'{prefix}/{bn}/{leaf}': (channels,)
                       for leaf in ('gamma', 'beta', 'avg_mean', 'avg_var')})
        shapes[f'{prefix}/{bn}/N'] = ()
    return shapes


def chainercv_deeplab_shapes(n_class):
    """Keys and shapes of ChainerCV's DeepLabV3plusXception65 .npz, from its architecture."""
    shapes = {**_conv_bn('feature_extractor/entryflow_conv1', 32, 3, 3),
              **_conv_bn('feature_extractor/entryflow_conv2', 64, 32, 3)}
    blocks = [('entryflow_block1', 64, (128,) * 3, True),
              ('entryflow_block2', 128, (256,) * 3, True),
              ('entryflow_block3', 256, (728,) * 3, True)]
    blocks += [(f'middleflow_block{k}', 728, (728,) * 3, False) for k in range(1, 17)]
    blocks += [('exitflow_block1', 728, (728, 1024, 1024), True),
               ('exitflow_block2', 1024, (1536, 1536, 2048), False)]
    for name, in_channels, depths, skip_conv in blocks:
        channels = (in_channels,) + depths
        for k in range(3):
            shapes.update(_separable(f'feature_extractor/{name}/separable{k + 1}',
                                     channels[k + 1], channels[k]))
        if skip_conv:
            shapes.update(_conv_bn(f'feature_extractor/{name}/conv', depths[2], in_channels))
    shapes.update({**_conv_bn('aspp/image_pooling_conv', 256, 2048),
                   **_conv_bn('aspp/conv1x1', 256, 2048), **_conv_bn('aspp/proj', 256, 1280)})
    for k in range(1, 4):
        shapes.update(_separable(f'aspp/atrous{k}', 256, 2048))
    shapes.update({**_conv_bn('decoder/feature_proj', 48, 256),
                   **_separable('decoder/conv1', 256, 304),
                   **_separable('decoder/conv2', 256, 256),
                   'decoder/conv_logits/W': (n_class, 256, 1, 1),
                   'decoder/conv_logits/b': (n_class,)})
    return shapes


def _zeros(shapes):
    return {key: numpy.zeros(shape, numpy.int64 if key.endswith('/N') else numpy.float32)
            for key, shape in shapes.items()}


def test_convert_consumes_every_chainercv_key(model):
    raw = _zeros(chainercv_deeplab_shapes(5))
    arrays = model.convert_weights({'/' + key: value for key, value in raw.items()},
                                   'chainercv')
    assert set(arrays) == set(raw)


def test_convert_names_every_bad_key(model):
    raw = _zeros(chainercv_deeplab_shapes(21))
    del raw['feature_extractor/middleflow_block7/separable2/dw_bn/gamma']
    raw['decoder/extra/W'] = numpy.zeros(3, numpy.float32)
    with pytest.raises(errors.WeightLoadError) as info:
        model.convert_weights(raw, 'chainercv')
    for key in ('feature_extractor/middleflow_block7/separable2/dw_bn/gamma',
                'decoder/extra/W', 'decoder/conv_logits/W', 'decoder/conv_logits/b'):
        assert key in str(info.value)


def test_load_a_chainercv_file_and_re_make_the_head(tmp_path, rng):
    arrays = _zeros(chainercv_deeplab_shapes(21))
    key = 'feature_extractor/exitflow_block2/separable3/pointwise/W'
    arrays[key] = rng.standard_normal(arrays[key].shape).astype(numpy.float32)
    numpy.savez(tmp_path / 'deeplab.npz', **arrays)
    model = deeplab_v3_plus.DeepLabV3plusXception65(
        n_class=21, pretrained_model=str(tmp_path / 'deeplab.npz'))
    numpy.testing.assert_array_equal(
        model.feature_extractor.exitflow_block2.separable3.pointwise.W.array, arrays[key])
    model.reset_head(4)
    assert model.decoder.conv_logits.W.shape == (4, 256, 1, 1)


EXPECTED = {'voc': (21, (513, 513), 'voc2012_val', 0.8236),
            'cityscapes': (19, (1025, 2049), 'cityscapes_val', 0.7914),
            'ade20k': (150, (513, 513), 'ade20k_val', 0.4252)}


@pytest.mark.parametrize('key', list(EXPECTED), ids=list(EXPECTED))
def test_weights_entries(key):
    entry = deeplab_v3_plus.DeepLabV3plusXception65.weights[key]
    assert zoo.schema_problems(entry) == []
    assert (entry.n_class, entry.preset.size, entry.reported.dataset,
            entry.reported.value) == EXPECTED[key]
    assert entry.preset.mean == entry.preset.std == (127.5, 127.5, 127.5)
    assert entry.source_format == 'chainercv_npz' and entry.sha256 == zoo.UNPUBLISHED
    assert f'deeplabv3plus_xception65_{key}_converted' in entry.url
    assert 'deeplab_v3plus_xception65' in zoo.list_models('semantic_segmentation')


def test_a_wrong_chainercv_file_names_every_bad_key(tmp_path):
    arrays = _zeros(chainercv_deeplab_shapes(21))
    del arrays['aspp/atrous2/pointwise/W']
    arrays['aspp/atrous4/pointwise/W'] = numpy.zeros((256, 2048, 1, 1), numpy.float32)
    arrays['decoder/conv1/dw_bn/gamma'] = numpy.zeros(300, numpy.float32)
    numpy.savez(tmp_path / 'wrong.npz', **arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        deeplab_v3_plus.DeepLabV3plusXception65(n_class=21,
                                                pretrained_model=str(tmp_path / 'wrong.npz'))
    for key in ('aspp/atrous2/pointwise/W', 'aspp/atrous4/pointwise/W',
                'decoder/conv1/dw_bn/gamma'):
        assert key in str(info.value)


def test_a_weights_key_loads_through_the_mirror_and_the_chainercv_conversion(
        tmp_path, monkeypatch):
    # NOTE: no batch-norm ``N`` in the file: the conversion keeps the model's.
    arrays = {key: value for key, value in _zeros(chainercv_deeplab_shapes(21)).items()
              if not key.endswith('/N')}
    arrays['decoder/conv_logits/b'] = numpy.arange(21, dtype=numpy.float32)
    entry = deeplab_v3_plus.DeepLabV3plusXception65.weights['voc']
    numpy.savez(tmp_path / entry.main_file.file_name, **arrays)
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(tmp_path))
    model = deeplab_v3_plus.DeepLabV3plusXception65(pretrained_model='voc',
                                                    min_input_size=MIN_INPUT_SIZE)
    numpy.testing.assert_array_equal(model.decoder.conv_logits.b.array, numpy.arange(21))
    assert model.n_class == 21 and model.label_names[15] == 'person'
    assert model.preset.size == (MIN_INPUT_SIZE, MIN_INPUT_SIZE)
    other = deeplab_v3_plus.DeepLabV3plusXception65(n_class=4, pretrained_model='voc')
    assert other.n_class == 4 and other.decoder.conv_logits.W.shape == (4, 256, 1, 1)
    assert other.min_input_size == (513, 513) and other.label_names is None
