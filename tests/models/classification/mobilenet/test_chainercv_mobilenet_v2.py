"""ChainerCV's MobileNetV2 (TensorFlow layout): SAME padding, shapes, predict, weights."""

import numpy
import PIL.Image
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.classification.mobilenet import chainercv_mobilenet_v2 as tf_mobilenet
from cvzoo.models.classification.mobilenet import mobilenet_v2
from cvzoo.testing import assert_is_classification_model

Model = tf_mobilenet.ChainerCVMobileNetV2
# ChainerCV's channels per width, written out by hand from its rule (multiples of 8, never
# more than 10 % down): stem, the outputs of the 17 blocks, conv1.
CHANNELS = {
    1.0: (32, (16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320), 1280),
    1.4: (48, (24, 32, 32, 48, 48, 48, 88, 88, 88, 88, 136, 136, 136, 224, 224, 224, 448),
          1792),
}
SMALL = zoo.Preset(size=64, mean=(128.0, 128.0, 128.0), std=(128.0, 128.0, 128.0),
                   crop_fraction=0.875)


def _forward(link, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return link(x).array


def _param(model, key):
    obj = model
    for part in key.split('/'):
        obj = getattr(obj, part)
    return numpy.asarray(getattr(obj, 'array', obj))


def _conv_bn(arrays, prefix, rng, shape):
    """ChainerCV's TFConv2DBNActiv leaves: conv/conv/W and bn/{gamma,beta,avg_*,N}."""
    out = shape[0]
    arrays[f'{prefix}/conv/conv/W'] = (rng.standard_normal(shape) * 0.1).astype('f')
    arrays[f'{prefix}/bn/gamma'] = rng.uniform(0.5, 1.5, out).astype('f')
    arrays[f'{prefix}/bn/beta'] = rng.uniform(-0.5, 0.5, out).astype('f')
    arrays[f'{prefix}/bn/avg_mean'] = rng.uniform(-0.5, 0.5, out).astype('f')
    arrays[f'{prefix}/bn/avg_var'] = rng.uniform(0.5, 2.0, out).astype('f')
    arrays[f'{prefix}/bn/N'] = numpy.array(0)


def chainercv_file(width, rng, n_class=1001):
    """The arrays of ChainerCV's MobileNetV2 npz for ``width``: its names, its shapes."""
    stem, outs, last = CHANNELS[width]
    arrays = {}
    _conv_bn(arrays, 'conv', rng, (stem, 3, 3, 3))
    in_channels = stem
    for i, out in enumerate(outs):
        name = 'expanded_conv' if i == 0 else f'expanded_conv_{i}'
        hidden = in_channels if i == 0 else in_channels * 6
        if i > 0:
            _conv_bn(arrays, f'{name}/expand', rng, (hidden, in_channels, 1, 1))
        _conv_bn(arrays, f'{name}/depthwise', rng, (hidden, 1, 3, 3))
        _conv_bn(arrays, f'{name}/project', rng, (out, hidden, 1, 1))
        in_channels = out
    _conv_bn(arrays, 'conv1', rng, (last, in_channels, 1, 1))
    arrays['logits_conv/conv/W'] = (rng.standard_normal((n_class, last, 1, 1)) * 0.05
                                    ).astype('f')
    arrays['logits_conv/conv/b'] = rng.uniform(-0.1, 0.1, n_class).astype('f')
    return arrays


def _cvzoo_key(chainercv_key):
    if chainercv_key.startswith('logits_conv/conv/'):
        return 'fc/' + chainercv_key[-1]
    return chainercv_key.replace('/conv/conv/W', '/conv/W')


def _tf_same_conv_reference(x, W, stride, groups, top_left=None):
    """TensorFlow's 'SAME' convolution in plain numpy: ceil(n / stride) outputs, the input
    shifted by max((out - 1) * stride + k - n, 0) // 2 before the first window, zeros
    outside. ``top_left`` forces another shift (1 gives symmetric padding)."""
    B, C, H, Wd = x.shape
    n_out, c_in, k, _ = W.shape
    size = [-(-n // stride) for n in (H, Wd)]
    shift = [max((o - 1) * stride + k - n, 0) // 2 for o, n in zip(size, (H, Wd))]
    shift = shift if top_left is None else [top_left] * 2
    big = numpy.zeros((B, C, H + 2 * k, Wd + 2 * k), x.dtype)
    big[:, :, k:k + H, k:k + Wd] = x
    y = numpy.zeros((B, n_out) + tuple(size))
    per_group = n_out // groups
    for di in range(k):
        for dj in range(k):
            rows = k - shift[0] + di + stride * numpy.arange(size[0])
            cols = k - shift[1] + dj + stride * numpy.arange(size[1])
            patch = big[:, :, rows][:, :, :, cols]
            for g in range(groups):
                y[:, g * per_group:(g + 1) * per_group] += numpy.einsum(
                    'bchw,oc->bohw', patch[:, g * c_in:(g + 1) * c_in],
                    W[g * per_group:(g + 1) * per_group, :, di, dj])
    return y


def _bn_relu6_reference(y, bn):
    scale = bn.gamma.array / numpy.sqrt(bn.avg_var + 1e-3)
    y = (y - bn.avg_mean[:, None, None]) * scale[:, None, None] + bn.beta.array[:, None, None]
    return numpy.clip(y, 0, 6)


def _randomize_bn(bn, rng):
    n = len(bn.avg_mean)
    bn.gamma.array[...] = rng.uniform(0.5, 1.5, n)
    bn.beta.array[...] = rng.uniform(-0.5, 0.5, n)
    bn.avg_mean[...] = rng.uniform(-0.5, 0.5, n)
    bn.avg_var[...] = rng.uniform(0.5, 2.0, n)


@pytest.fixture(scope='module')
def model():
    return Model(n_class=10)


@pytest.mark.parametrize('size, ksize, stride, expected', [
    (4, 3, 2, (0, 1)), (5, 3, 2, (1, 1)), (7, 3, 1, (1, 1)), (1, 3, 2, (1, 1)),
    (6, 5, 2, (1, 2)), (4, 1, 2, (0, 0)), (8, 1, 1, (0, 0)),
], ids=['even_s2', 'odd_s2', 's1', 'one_pixel_s2', 'k5_s2', 'k1_s2', 'k1_s1'])
def test_tf_same_pad_widths(size, ksize, stride, expected):
    x = numpy.random.default_rng(7).uniform(1, 2, (2, 3, size, size + 1)).astype('f')
    y = tf_mobilenet.tf_same_pad(x, ksize, stride)
    if expected == (0, 0):
        assert y is x
        return
    y = numpy.asarray(getattr(y, 'array', y))
    top, bottom = expected
    assert y.shape[2] == size + top + bottom and y.dtype == numpy.float32
    numpy.testing.assert_allclose(y[:, :, top:top + size].sum(), x.sum(), rtol=1e-6)
    numpy.testing.assert_allclose(y.sum(), x.sum(), rtol=1e-6)


@pytest.mark.parametrize('size', [(8, 8), (7, 9), (6, 5)], ids=['even', 'odd', 'mixed'])
def test_stride_2_layers_pad_as_tensorflow(model, size):
    rng = numpy.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 3) + size).astype(numpy.float32)
    _randomize_bn(model.conv.bn, rng)
    W = model.conv.conv.W.array
    expected = _bn_relu6_reference(_tf_same_conv_reference(x, W, 2, 1), model.conv.bn)
    found = _forward(model.conv, x)
    numpy.testing.assert_allclose(found, expected, rtol=1e-4, atol=1e-4)
    if size == (8, 8):  # symmetric padding would give another answer: the test can fail
        symmetric = _tf_same_conv_reference(x, W, 2, 1, top_left=1)
        assert not numpy.allclose(found, _bn_relu6_reference(symmetric, model.conv.bn))
    depthwise = model.expanded_conv_1.depthwise
    _randomize_bn(depthwise.bn, rng)
    h = rng.uniform(-1, 1, (1, 96) + size).astype(numpy.float32)
    expected = _bn_relu6_reference(
        _tf_same_conv_reference(h, depthwise.conv.W.array, 2, 96), depthwise.bn)
    numpy.testing.assert_allclose(_forward(depthwise, h), expected, rtol=1e-4, atol=1e-4)


def test_only_stride_2_layers_are_replaced(model):
    replaced = [name for name in mobilenet_v2.BLOCK_NAMES
                if type(getattr(model, name).depthwise).__name__ == '_SamePadConv2DBNActiv']
    assert replaced == ['expanded_conv_1', 'expanded_conv_3', 'expanded_conv_6',
                        'expanded_conv_13']
    assert type(model.conv).__name__ == '_SamePadConv2DBNActiv'
    assert model.conv.conv.pad == 0 and model.expanded_conv_2.depthwise.conv.pad == 1
    assert {bn.eps for bn in (model.conv.bn, model.expanded_conv_7.project.bn,
                              model.conv1.bn)} == {1e-3}


def test_output_shapes_and_pick(model):
    x = numpy.random.default_rng(1).uniform(-1, 1, (2, 3, 65, 64)).astype(numpy.float32)
    model.pick = ('conv', 'expanded_conv', 'expanded_conv_2', 'expanded_conv_5',
                  'expanded_conv_12', 'expanded_conv_16', 'conv1', 'pool', 'fc')
    with config.using_config('train', False), config.no_backprop_mode():
        shapes = [h.shape for h in model(x)]
    model.pick = 'fc'
    assert shapes == [(2, 32, 33, 32), (2, 16, 33, 32), (2, 24, 17, 16), (2, 32, 9, 8),
                      (2, 96, 5, 4), (2, 320, 3, 2), (2, 1280, 3, 2), (2, 1280), (2, 10)]
    assert model.layer_names[0] == 'conv' and model.layer_names[-1] == 'fc'


@pytest.mark.parametrize('width, n_param', [(1.0, 3504872), (1.4, 6108776)],
                         ids=['width_1.0', 'width_1.4'])
def test_width_and_parameter_count(width, n_param):
    net = Model(width_multiplier=width)
    assert net.conv.conv.W.shape[0] == CHANNELS[width][0]
    assert net.conv1.conv.W.shape[0] == CHANNELS[width][2]
    assert sum(p.size for p in net.params()) == n_param  # the TF-Slim counts with 1000 classes


def test_predict_on_each_input_kind(model, tmp_path):
    rng = numpy.random.default_rng(2)
    model.preset = SMALL
    hwc = rng.integers(0, 256, (50, 70, 3), dtype=numpy.uint8)
    PIL.Image.fromarray(hwc).save(tmp_path / 'img.png')
    chw = rng.uniform(0, 255, (3, 80, 61)).astype(numpy.float32)
    imgs = [chw, hwc, PIL.Image.fromarray(hwc), str(tmp_path / 'img.png')]
    assert_is_classification_model(model, imgs, 10)
    probs = model.predict(imgs)
    numpy.testing.assert_allclose(probs[1], probs[3], rtol=1e-4, atol=1e-7)
    assert model.to_device('cpu') is model


@pytest.mark.parametrize('kwargs, message', [
    ({'pretrained_model': 'imagenet_1.4', 'width_multiplier': 1.0}, 'width 1.4 only'),
    ({'pretrained_model': 'imagenet', 'width_multiplier': 1.4}, 'width 1.0 only'),
    ({'pretrained_model': 'imagenet_2.0'}, "no weights 'imagenet_2.0'"),
    ({'width_multiplier': -1.0}, 'width_multiplier: expected a number > 0'),
], ids=['key_1.4_width_1.0', 'key_1.0_width_1.4', 'unknown_key', 'negative_width'])
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Model(**kwargs)


@pytest.fixture(scope='module', params=[1.0, 1.4], ids=['width_1.0', 'width_1.4'])
def file_arrays(request):
    return request.param, chainercv_file(request.param, numpy.random.default_rng(3))


def test_zoo_key_loads_every_key_of_a_chainercv_file(file_arrays, tmp_path, monkeypatch):
    width, arrays = file_arrays
    key = {1.0: 'imagenet', 1.4: 'imagenet_1.4'}[width]
    entry = Model.weights[key]
    numpy.savez(tmp_path / entry.main_file.file_name, **arrays)
    monkeypatch.setattr(zoo, 'fetch_weights',
                        lambda weights: [str(tmp_path / weights.main_file.file_name)])
    net = Model(pretrained_model=key)
    assert net.width_multiplier == width
    for chainercv_key, value in arrays.items():
        expected = value[1:, :, 0, 0] if chainercv_key == 'logits_conv/conv/W' else value
        expected = expected[1:] if chainercv_key == 'logits_conv/conv/b' else expected
        numpy.testing.assert_array_equal(_param(net, _cvzoo_key(chainercv_key)), expected,
                                         err_msg=chainercv_key)
    assert net.fc.W.shape == (1000, CHANNELS[width][2])
    assert net.preset == tf_mobilenet.TF_PRESET and len(net.label_names) == 1000
    x = numpy.random.default_rng(4).uniform(0, 255, (3, 40, 52)).astype(numpy.float32)
    net.preset = SMALL
    assert_is_classification_model(net, [x], 1000)


def test_local_file_with_leading_slashes_and_other_n_class(tmp_path):
    arrays = chainercv_file(1.0, numpy.random.default_rng(5), n_class=7)
    numpy.savez(tmp_path / 'mine.npz', **{'/' + k: v for k, v in arrays.items()})
    net = Model(n_class=7, pretrained_model=tmp_path / 'mine.npz', source='chainercv')
    numpy.testing.assert_array_equal(net.fc.W.array, arrays['logits_conv/conv/W'][:, :, 0, 0])
    numpy.testing.assert_array_equal(net.fc.b.array, arrays['logits_conv/conv/b'])
    numpy.testing.assert_array_equal(net.expanded_conv_13.depthwise.conv.W.array,
                                     arrays['expanded_conv_13/depthwise/conv/conv/W'])


def test_wrong_files_name_every_bad_key(tmp_path):
    arrays = chainercv_file(1.0, numpy.random.default_rng(6))
    arrays['logits/W'] = arrays['logits_conv/conv/b']
    arrays['expanded_conv_17/project/conv/conv/W'] = arrays['conv/conv/conv/W']
    arrays['expanded_conv/expand/conv/conv/W'] = arrays['conv/conv/conv/W']
    numpy.savez(tmp_path / 'foreign.npz', **arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        Model(pretrained_model=tmp_path / 'foreign.npz', source='chainercv')
    for key in ('logits/W', 'expanded_conv_17/project/conv/conv/W',
                'expanded_conv/expand/conv/conv/W'):
        assert key in str(info.value), str(info.value)
    for key in ('logits/W', 'expanded_conv_17/project/conv/conv/W',
                'expanded_conv/expand/conv/conv/W'):
        del arrays[key]
    del arrays['expanded_conv_4/depthwise/bn/gamma']
    key = 'expanded_conv_2/expand/conv/conv/W'
    arrays[key] = arrays[key][:100]
    numpy.savez(tmp_path / 'bad.npz', **arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        Model(pretrained_model=tmp_path / 'bad.npz', source='chainercv')
    for part in ('expanded_conv_4/depthwise/bn/gamma', 'expanded_conv_2/expand/conv/W',
                 '(100, 24, 1, 1)', 'bad.npz'):
        assert part in str(info.value), str(info.value)


def test_torchvision_source_is_refused(model):
    with pytest.raises(ValueError, match="expected 'chainercv' or 'cvzoo'"):
        model.convert_weights({'features.0.0.weight': numpy.zeros(1)}, 'torchvision')


def test_entries_follow_the_schema():
    assert 'mobilenet_v2_chainercv' in zoo.list_models('classification')
    assert set(Model.weights) == set(tf_mobilenet.KEY_WIDTHS) == {'imagenet', 'imagenet_1.4'}
    for key, entry in Model.weights.items():
        assert zoo.schema_problems(entry) == [], key
        assert entry.source_format == 'chainercv_npz' and entry.convert_from == 'chainercv'
        assert entry.n_class == 1000 and entry.sha256 == zoo.UNPUBLISHED
        assert entry.url.startswith('https://chainercv-models.preferred.jp/mobilenet_v2_')
        assert f'depth_multiplier_{tf_mobilenet.KEY_WIDTHS[key]}_' in entry.main_file.file_name
        assert entry.preset.mean == (128.0,) * 3 and entry.preset.std == (128.0,) * 3
    assert [round(e.reported.value, 3) for e in Model.weights.values()] == [0.717, 0.757]
