"""CfgNetwork: building from cfg sections, each layer's semantics, weights slicing."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models.detection.darknet import cfg_layers, cfg_network
from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector
from cvzoo.models.weights.converters import darknet


def _network(path):
    return cfg_network.CfgNetwork(darknet.parse_darknet_cfg(path))


def _run(network, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return [h.array for h in network(x)]


def test_tiny_cfg_builds_every_section_kind(tiny_cfg, rng):
    network = _network(tiny_cfg())
    kinds = [type(layer).__name__ if not hasattr(layer, 'kind') else layer.kind
             for layer in network.layers]
    assert kinds == ['DarknetConvolution', 'DarknetConvolution', 'dropout', 'shortcut',
                     'maxpool', 'route', 'DarknetConvolution', 'maxpool', 'route',
                     'DarknetConvolution', 'yolo', 'route', 'upsample', 'route',
                     'DarknetConvolution', 'yolo']
    assert network.insize == (32, 32)
    assert [h['index'] for h in network.heads] == [10, 15]
    numpy.testing.assert_array_equal(network.heads[0]['anchors'], [[12, 20], [30, 24]])
    assert network.heads[1]['scale_x_y'] == 1.05
    # route layers=-1,-2,4: 8 + 8 + 8 channels; route -1,3 after upsample: 24 + 8
    assert network.layer9.conv.W.shape == (14, 24, 1, 1)
    assert network.layer14.conv.W.shape == (14, 32, 1, 1)
    assert network.layer1.conv.W.shape == (8, 1, 3, 3)
    assert network.layer6.conv.W.shape == (8, 4, 1, 1)
    x = rng.standard_normal((2, 3, 32, 32)).astype(numpy.float32)
    out = _run(network, x)
    assert [o.shape for o in out] == [(2, 14, 8, 8), (2, 14, 16, 16)]
    assert all(o.dtype == numpy.float32 for o in out)


@pytest.mark.parametrize('options, pad', [
    ({'size': '5', 'pad': '1'}, 2), ({'size': '1', 'pad': '1'}, 0),
    ({'size': '3', 'pad': '0', 'padding': '2'}, 2), ({'size': '3'}, 0),
], ids=['pad_flag_5', 'pad_flag_1', 'explicit_padding', 'no_pad'])
def test_conv_padding_rule(options, pad):
    layer, filters = cfg_layers.build_convolutional(
        dict(options, filters='4', activation='linear'), 0, {-1: 3})
    assert layer.conv.pad == pad and filters == 4


def _darknet_maxpool(x, size, stride, padding):
    """Darknet's maxpool_layer.c forward, with loops."""
    n, c, h, w = x.shape
    out_h, out_w = (h + padding - size) // stride + 1, (w + padding - size) // stride + 1
    y = numpy.full((n, c, out_h, out_w), -numpy.inf, x.dtype)
    offset = -(padding // 2)
    for i in range(out_h):
        for j in range(out_w):
            for di in range(size):
                for dj in range(size):
                    r, s = offset + i * stride + di, offset + j * stride + dj
                    if 0 <= r < h and 0 <= s < w:
                        y[:, :, i, j] = numpy.maximum(y[:, :, i, j], x[:, :, r, s])
    return y


@pytest.mark.parametrize('size, stride, shape', [
    (3, 1, (7, 6)), (5, 1, (6, 6)), (9, 1, (5, 5)), (2, 1, (5, 4)), (2, 2, (7, 8)),
    (3, 2, (7, 7)),
], ids=['s1k3', 's1k5', 's1k9_spp', 's1k2_tiny', 's2k2_odd', 's2k3'])
def test_maxpool_matches_darknet(size, stride, shape, rng):
    layer, _ = cfg_layers.build_maxpool({'size': str(size), 'stride': str(stride)}, 1,
                                        {0: 2})
    x = rng.standard_normal((2, 2) + shape).astype(numpy.float32)
    y = layer(x, {}).array
    numpy.testing.assert_array_equal(y, _darknet_maxpool(x, size, stride, size - 1))


def test_route_groups_and_concat(rng):
    a = rng.standard_normal((1, 6, 3, 3)).astype(numpy.float32)
    b = rng.standard_normal((1, 4, 3, 3)).astype(numpy.float32)
    channels = {0: 6, 1: 4, 2: 4}
    layer, n = cfg_layers.build_route({'layers': '0, -2', 'groups': '2', 'group_id': '1'}, 3,
                                      channels)
    assert n == 5 and layer.sources == (0, 1)
    y = layer(None, {0: a, 1: b}).array
    numpy.testing.assert_array_equal(y, numpy.concatenate([a[:, 3:], b[:, 2:]], axis=1))


def test_shortcut_and_upsample(rng):
    a = rng.standard_normal((1, 2, 2, 3)).astype(numpy.float32)
    b = rng.standard_normal((1, 2, 2, 3)).astype(numpy.float32)
    layer, _ = cfg_layers.build_shortcut({'from': '-3', 'activation': 'leaky'}, 4,
                                         {1: 2, 3: 2})
    y = layer(b, {1: a}).array
    numpy.testing.assert_allclose(y, numpy.where(a + b > 0, a + b, 0.1 * (a + b)), rtol=1e-6)
    layer, _ = cfg_layers.build_upsample({'stride': '2'}, 1, {0: 2})
    numpy.testing.assert_array_equal(layer(a, {}).array, a.repeat(2, 2).repeat(2, 3))


def test_bn_conv_forward_uses_darknet_eps(tiny_cfg, rng):
    path = tiny_cfg("""[net]
width=4
height=4
channels=2
[convolutional]
filters=12
size=3
stride=1
pad=1
batch_normalize=1
activation=leaky
[yolo]
mask=0,1
anchors=1,1, 2,2
classes=1
num=2
""")
    network = _network(path)
    conv = network.layer0
    conv.conv.W.array[...] = rng.standard_normal((12, 2, 3, 3))
    gamma, beta = rng.uniform(0.5, 2, 12), rng.standard_normal(12)
    mean, var = rng.standard_normal(12), rng.uniform(1e-4, 1e-3, 12)
    conv.bn.gamma.array[...], conv.bn.beta.array[...] = gamma, beta
    conv.bn.avg_mean[...], conv.bn.avg_var[...] = mean, var
    x = rng.standard_normal((1, 2, 4, 4)).astype(numpy.float64)
    padded = numpy.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    W = conv.conv.W.array.astype(numpy.float64)
    y = numpy.zeros((1, 12, 4, 4))
    for i in range(4):
        for j in range(4):
            y[:, :, i, j] = numpy.einsum('ncij,ocij->no', padded[:, :, i:i + 3, j:j + 3], W)
    y = gamma[:, None, None] * (y - mean[:, None, None]) / numpy.sqrt(
        var[:, None, None] + 1e-5) + beta[:, None, None]
    expected = numpy.where(y > 0, y, 0.1 * y)
    out, = _run(network, x.astype(numpy.float32))
    numpy.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('text, message', [
    ('[net]\n[reorg]\nstride=2\n', 'reorg'),
    ('[net]\n[convolutional]\nfilters=4\nactivation=gelu\n', 'activation'),
    ('[net]\n[convolutional]\nfilters=4\n[route]\nlayers=3\n', 'earlier layers'),
    ('[net]\n[convolutional]\nfilters=5\nsize=1\n[yolo]\nmask=0\nanchors=1,1\nclasses=2\n',
     'expects 7 input channels'),
    ('[net]\n[convolutional]\nfilters=4\n', r'no \[yolo\]'),
    ('[net]\nchannels=3\n[convolutional]\nfilters=4\ngroups=2\n', 'groups=2'),
    ('[net]\n[convolutional]\nfilters=4\ndilation=2\n', 'dilation=2'),
    ('[net]\n[maxpool]\nstride=2\nstride_x=1\n', 'stride_x'),
    ('[net]\n[convolutional]\nfilters=4\n[shortcut]\nfrom=-1\nweights_type=per_channel\n',
     'weights_type'),
], ids=['unknown_section', 'activation', 'route_ahead', 'head_channels', 'no_head',
        'groups', 'dilation', 'stride_x', 'shortcut_weights'])
def test_bad_cfg_names_the_problem(tiny_cfg, text, message):
    with pytest.raises(errors.CorruptFileError, match=message):
        _network(tiny_cfg(text))


def test_weights_sliced_in_cfg_order(tiny_cfg, weights_writer, tmp_path):
    network = _network(tiny_cfg())
    blocks = network.darknet_blocks()
    # conv0 (bn), conv1 (bn, depthwise), conv6, conv9, conv14 (no bn: bias first)
    assert [name for name, _ in blocks][:5] == [
        'layer0/bn/beta', 'layer0/bn/gamma', 'layer0/bn/avg_mean', 'layer0/bn/avg_var',
        'layer0/conv/W']
    assert blocks[10] == ('layer6/conv/b', (8,))
    n_value = sum(int(numpy.prod(shape)) for _, shape in blocks)
    assert n_value == (8 * 4 + 8 * 27) + (8 * 4 + 8 * 9) + (8 + 8 * 4) + (14 + 14 * 24) + (
        14 + 14 * 32)
    values = numpy.arange(n_value, dtype=numpy.float32) / 1000
    path = weights_writer(tmp_path / 'tiny.weights', values)
    model = DarknetDetector(tiny_cfg(), path)
    params = dict(model.namedparams())
    position = 0
    for name, shape in blocks:
        size = int(numpy.prod(shape))
        if name.endswith(('avg_mean', 'avg_var')):
            layer, _, key = name.split('/')
            array = getattr(getattr(model.network, layer).bn, key)
        else:
            array = params['/network/' + name].array
        numpy.testing.assert_array_equal(array, values[position:position + size].reshape(shape),
                                         err_msg=name)
        position += size


@pytest.mark.parametrize('change', [-1, 3], ids=['too_few', 'too_many'])
def test_weights_size_mismatch_names_the_file(tiny_cfg, weights_writer, tmp_path, change):
    n_value = sum(int(numpy.prod(s)) for _, s in _network(tiny_cfg()).darknet_blocks())
    path = weights_writer(tmp_path / 'bad.weights', numpy.zeros(n_value + change))
    with pytest.raises(errors.CorruptFileError, match='bad.weights') as info:
        DarknetDetector(tiny_cfg(), path)
    assert str(n_value) in str(info.value) and str(n_value + change) in str(info.value)


def test_old_header_with_int32_seen(tiny_cfg, weights_writer, tmp_path):
    n_value = sum(int(numpy.prod(s)) for _, s in _network(tiny_cfg()).darknet_blocks())
    values = numpy.full(n_value, 0.5, numpy.float32)
    path = weights_writer(tmp_path / 'old.weights', values, version=(0, 1, 0))
    model = DarknetDetector(tiny_cfg(), path)
    assert (model.network.layer14.conv.b.array == 0.5).all()
