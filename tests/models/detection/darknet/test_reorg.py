"""[reorg]: Darknet's index rule against a transcription of its C loop, and the builder."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import gradient_check
from cvzoo.models.detection.darknet import cfg_network
from cvzoo.models.detection.darknet.reorg import build_reorg, darknet_reorg
from cvzoo.models.weights.converters import darknet


def _reorg_cpu_loop(x, stride):
    """reorg_cpu(x, w, h, c, batch, stride, forward=0, out) of pjreddie's blas.c, as
    forward_reorg_layer calls it (w, h, c of the layer's input), on flat arrays."""
    batch, c, h, w = x.shape
    flat_in = x.reshape(-1)
    flat_out = numpy.zeros_like(flat_in)
    out_c = c // (stride * stride)
    for b in range(batch):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    in_index = i + w * (j + h * (k + c * b))
                    c2 = k % out_c
                    offset = k // out_c
                    w2 = i * stride + offset % stride
                    h2 = j * stride + offset // stride
                    out_index = w2 + w * stride * (h2 + h * stride * (c2 + out_c * b))
                    flat_out[in_index] = flat_in[out_index]
    return flat_out.reshape(batch, c * stride * stride, h // stride, w // stride)


def _plain_space_to_depth(x, s):
    B, C, H, W = x.shape
    y = x.reshape(B, C, H // s, s, W // s, s).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(B, C * s * s, H // s, W // s)


@pytest.mark.parametrize('shape, stride', [
    ((1, 4, 4, 4), 2), ((2, 8, 6, 4), 2), ((1, 64, 26, 26), 2), ((2, 9, 6, 3), 3),
    ((1, 3, 2, 2), 1)], ids=['small', 'batch2-rect', 'yolov2', 'stride3', 'stride1'])
def test_matches_the_c_loop(rng, shape, stride):
    x = rng.standard_normal(shape).astype(numpy.float32)
    y = darknet_reorg(x, stride)
    assert y.dtype == numpy.float32
    numpy.testing.assert_array_equal(y.array, _reorg_cpu_loop(x, stride))


def test_differs_from_a_plain_space_to_depth(rng):
    # the quirk is real: a test that a plain space-to-depth would pass is no test
    x = rng.standard_normal((1, 8, 4, 4)).astype(numpy.float32)
    assert not numpy.array_equal(darknet_reorg(x).array, _plain_space_to_depth(x, 2))


def test_gradient(rng):
    x = rng.standard_normal((2, 4, 4, 2))
    gy = rng.standard_normal((2, 16, 2, 1))
    gradient_check.check_backward(lambda h: darknet_reorg(h, 2), x, gy, dtype=numpy.float64)


def test_bad_sizes():
    with pytest.raises(ValueError, match='x: .*stride 2.*shape \\(1, 4, 3, 4\\)'):
        darknet_reorg(numpy.zeros((1, 4, 3, 4), numpy.float32))
    with pytest.raises(ValueError, match='divisible by 4'):
        darknet_reorg(numpy.zeros((1, 6, 4, 4), numpy.float32))


REORG_CFG = """
[net]
width=16
height=16
channels=3

[convolutional]
filters=8
size=3
stride=1
pad=1
activation=leaky

[maxpool]
size=2
stride=2

[route]
layers=-2

[reorg]
stride=2

[route]
layers=-1,-3

[convolutional]
filters=12
size=1
stride=1
pad=1
activation=linear

[region]
anchors=1,1, 2,2
classes=1
num=2
"""


def test_cfg_network_with_reorg(tmp_path, rng):
    path = tmp_path / 'reorg.cfg'
    path.write_text(REORG_CFG)
    network = cfg_network.CfgNetwork(darknet.parse_darknet_cfg(path))
    x = rng.standard_normal((2, 3, 16, 16)).astype(numpy.float32)
    raw, = network(x)
    assert raw.shape == (2, 12, 8, 8)
    # the route reads the reorg output (32 channels) then the pooled map (8 channels)
    assert network.layer5.conv.W.shape == (12, 40, 1, 1)


@pytest.mark.parametrize('options, message', [
    ({'stride': '2', 'reverse': '1'}, 'reverse=1 is not supported'),
    ({'stride': '2', 'flatten': '1'}, 'flatten=1'),
    ({'stride': '3'}, 'stride=3 does not fit 8 input channels'),
    ({'stride': '0'}, 'stride=0')], ids=['reverse', 'flatten', 'channels', 'zero'])
def test_builder_refuses(options, message):
    with pytest.raises(errors.CorruptFileError, match=f'layer 4.*{message}'):
        build_reorg(options, 4, {3: 8})


def test_builder_channels():
    layer, channels = build_reorg({'stride': '2'}, 1, {0: 64})
    assert channels == 256 and layer.stride == 2
