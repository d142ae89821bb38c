"""YOLO weights: ChainerCV .npz files and Darknet .weights written by the tests."""

import struct

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import backend, config
from cvzoo.models.detection.darknet import cfg_network
from cvzoo.models.detection.yolo import yolo_base
from cvzoo.models.detection.yolo.yolo_v2 import YOLOv2, YOLOv2Tiny
from cvzoo.models.detection.yolo.yolo_v3 import YOLOv3


def _bn_link(shapes, name, in_channels, out_channels, ksize):
    shapes[f'{name}/conv/W'] = (out_channels, in_channels, ksize, ksize)
    for leaf in ('gamma', 'beta', 'avg_mean', 'avg_var'):
        shapes[f'{name}/bn/{leaf}'] = (out_channels,)
    shapes[f'{name}/bn/N'] = ()


def _plain_link(shapes, name, in_channels, out_channels):
    shapes[f'{name}/W'] = (out_channels, in_channels, 1, 1)
    shapes[f'{name}/b'] = (out_channels,)


def chainercv_yolov2_shapes(n_fg_class):
    """Names and shapes of ChainerCV's YOLOv2, transcribed from its Darknet19Extractor."""
    shapes, in_channels, link = {}, 3, 0
    for k, n_conv in enumerate((1, 1, 3, 3, 5, 5)):
        for i in range(n_conv):
            out, ksize = (32 << k, 3) if i % 2 == 0 else (32 << (k - 1), 1)
            _bn_link(shapes, f'extractor/{link}', in_channels, out, ksize)
            in_channels, link = out, link + 1
    for link, (in_channels, out, ksize) in enumerate(
            [(1024, 1024, 3), (1024, 1024, 3), (512, 64, 1), (1280, 1024, 3)], start=18):
        _bn_link(shapes, f'extractor/{link}', in_channels, out, ksize)
    _plain_link(shapes, 'subnet', 1024, 5 * (5 + n_fg_class))
    return shapes


def chainercv_yolov2_tiny_shapes(n_fg_class):
    shapes, in_channels = {}, 3
    for k in range(7):
        _bn_link(shapes, f'extractor/{k}', in_channels, 16 << k, 3)
        in_channels = 16 << k
    _bn_link(shapes, 'extractor/7', 1024, 1024, 3)
    _plain_link(shapes, 'subnet', 1024, 5 * (5 + n_fg_class))
    return shapes


def chainercv_yolov3_shapes(n_fg_class):
    """Names and shapes of ChainerCV's YOLOv3 (Darknet53Extractor + subnet)."""
    shapes = {}
    _bn_link(shapes, 'extractor/0', 3, 32, 3)
    link = 1
    for k, n_block in enumerate((1, 2, 8, 8, 4)):
        _bn_link(shapes, f'extractor/{link}', 32 << k, 32 << (k + 1), 3)
        for i in range(n_block):
            _bn_link(shapes, f'extractor/{link + 1 + i}/0', 32 << (k + 1), 32 << k, 1)
            _bn_link(shapes, f'extractor/{link + 1 + i}/1', 32 << k, 32 << (k + 1), 3)
        link += 1 + n_block
    in_channels = 1024
    for i, n in enumerate((512, 256, 128)):
        if i > 0:
            _bn_link(shapes, f'extractor/{link}', in_channels, n, 1)
            in_channels, link = n + (512 if i == 1 else 256), link + 1  # + skip connection
        for j in range(5):
            out, ksize = (n, 1) if j % 2 == 0 else (n * 2, 3)
            _bn_link(shapes, f'extractor/{link}', in_channels, out, ksize)
            in_channels, link = out, link + 1
        _bn_link(shapes, f'subnet/{i}/0', n, n * 2, 3)
        _plain_link(shapes, f'subnet/{i}/1', n * 2, 3 * (5 + n_fg_class))
    return shapes


SHAPES = {YOLOv2: chainercv_yolov2_shapes, YOLOv2Tiny: chainercv_yolov2_tiny_shapes,
          YOLOv3: chainercv_yolov3_shapes}


def _random_file(rng, shapes):
    arrays = {}
    for name, shape in shapes.items():
        if name.endswith('/N'):
            arrays[name] = numpy.array(7, numpy.int64)
        elif name.endswith('avg_var'):
            arrays[name] = rng.uniform(0.5, 2, shape).astype(numpy.float32)
        else:  # small weights keep random activations finite through 9-75 layers
            arrays[name] = (0.05 * rng.standard_normal(shape)).astype(numpy.float32)
    return arrays


@pytest.mark.parametrize('cls', [YOLOv2Tiny, YOLOv2, YOLOv3], ids=['tiny', 'v2', 'v3'])
def test_every_chainercv_name_maps_to_a_parameter_of_its_shape(cls):
    shapes = SHAPES[cls](20)
    raw = {name: numpy.broadcast_to(numpy.float32(1), shape) for name, shape in shapes.items()}
    network_shapes = {}
    network = cfg_network.CfgNetwork(cls.make_sections(20, (416, 416)))
    for i, layer in network.convolutions():
        for name, shape in layer.darknet_blocks():
            network_shapes[f'network/layer{i}/{name}'] = shape
    arrays = yolo_base.convert_chainercv(network, cls.chainercv_links(), raw)
    weights = {k: v.shape for k, v in arrays.items() if not k.endswith('/N')}
    assert weights == network_shapes


def test_tiny_chainercv_file_loads_and_permutes(tmp_path, rng):
    arrays = _random_file(rng, chainercv_yolov2_tiny_shapes(20))
    arrays['subnet/W'][:] = 0
    arrays['subnet/b'][:25] = [2.0, -1.0, 0.5, 0.2] + [0.0] * 21  # ty, tx, th, tw first
    path = tmp_path / 'yolo_v2_tiny_chainercv.npz'
    numpy.savez(path, **arrays)
    model = YOLOv2Tiny(pretrained_model=str(path))
    assert model.preprocessing == 'chainercv'
    x = numpy.zeros((1, 3, 64, 64), numpy.float32)
    with config.using_config('train', False), config.no_backprop_mode():
        raw, = model(x)
    numpy.testing.assert_allclose(raw.array[0, :4, 0, 0], [-1.0, 2.0, 0.2, 0.5])
    bn = model.network.layer0.bn
    # ChainerCV divides by sqrt(var + 2e-5), cvzoo by sqrt(var' + 1e-5)
    numpy.testing.assert_allclose(backend.to_numpy(bn.avg_var),
                                  arrays['extractor/0/bn/avg_var'] + 1e-5, rtol=1e-6)
    numpy.testing.assert_array_equal(model.network.layer2.conv.W.array,
                                     arrays['extractor/1/conv/W'])


def test_swap_xy_channels_by_hand():
    b = numpy.arange(14, dtype=numpy.float32)  # 2 anchors x (5 + 2 classes)
    swapped = yolo_base.swap_xy_channels(b, 7)
    assert swapped.tolist() == [1, 0, 3, 2, 4, 5, 6, 8, 7, 10, 9, 11, 12, 13]
    numpy.testing.assert_array_equal(yolo_base.swap_xy_channels(swapped, 7), b)


def test_wrong_chainercv_file_names_every_bad_key(tmp_path, rng):
    arrays = _random_file(rng, chainercv_yolov2_tiny_shapes(20))
    del arrays['extractor/3/conv/W'], arrays['subnet/b']
    arrays['extractor/9/conv/W'] = numpy.zeros((1,), numpy.float32)
    path = tmp_path / 'bad.npz'
    numpy.savez(path, **arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        YOLOv2Tiny(pretrained_model=str(path))
    message = str(info.value)
    for part in ('missing: extractor/3/conv/W, subnet/b', 'unexpected: extractor/9/conv/W'):
        assert part in message


def _write_weights(path, values):
    header = struct.pack('<3iq', 0, 2, 0, 32013312)
    path.write_bytes(header + numpy.asarray(values, '<f4').tobytes())


def test_tiny_darknet_weights_load_in_cfg_order(tmp_path, rng):
    model = YOLOv2Tiny()
    blocks = model.network.darknet_blocks()
    n_value = sum(int(numpy.prod(shape)) for _, shape in blocks)
    values = rng.uniform(0.5, 1.5, n_value).astype(numpy.float32)
    path = tmp_path / 'yolov2-tiny-voc.weights'
    _write_weights(path, values)
    model = YOLOv2Tiny(pretrained_model=str(path))
    assert model.preprocessing == 'darknet' and model.letterbox
    bn = model.network.layer0.bn
    numpy.testing.assert_array_equal(bn.beta.array, values[:16])  # Darknet's "bias" first
    numpy.testing.assert_array_equal(bn.gamma.array, values[16:32])
    variance = values[48:64].astype(numpy.float64)
    # pjreddie's x / (sqrt(var) + 1e-6) == x / sqrt(var' + eps)
    numpy.testing.assert_allclose(
        numpy.sqrt(backend.to_numpy(bn.avg_var) + 1e-5), numpy.sqrt(variance) + 1e-6,
        rtol=1e-6)
    head = model.network.layer14.conv
    numpy.testing.assert_array_equal(head.W.array.reshape(-1), values[-head.W.size:])
    _write_weights(path, values[:-1])
    with pytest.raises(errors.CorruptFileError, match='yolov2-tiny-voc.weights'):
        YOLOv2Tiny(pretrained_model=str(path))


def test_local_file_with_other_classes_and_n_fg_class(tmp_path, rng):
    path = tmp_path / 'three.npz'
    numpy.savez(path, **_random_file(rng, chainercv_yolov2_tiny_shapes(3)))
    model = YOLOv2Tiny(n_fg_class=3, pretrained_model=str(path))
    assert model.n_fg_class == 3 and model.label_names is None
    model.use_preset('evaluate')
    _bboxes, labels, _ = model.predict([rng.uniform(0, 255, (3, 40, 50)).astype('f')])
    assert labels[0].max(initial=0) < 3


@pytest.mark.slow
def test_yolov3_chainercv_file_with_the_real_shapes(tmp_path, rng):
    path = tmp_path / 'yolo_v3_voc0712.npz'
    numpy.savez(path, **_random_file(rng, chainercv_yolov3_shapes(20)))
    model = YOLOv3(pretrained_model=str(path))
    assert model.preprocessing == 'chainercv'
