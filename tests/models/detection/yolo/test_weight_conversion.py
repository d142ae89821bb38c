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

SHAPES = {YOLOv2: 'yolov2_shapes', YOLOv2Tiny: 'yolov2_tiny_shapes', YOLOv3: 'yolov3_shapes'}


@pytest.mark.parametrize('cls', [YOLOv2Tiny, YOLOv2, YOLOv3], ids=['tiny', 'v2', 'v3'])
def test_every_chainercv_name_maps_to_a_parameter_of_its_shape(cls, chainercv):
    shapes = getattr(chainercv, SHAPES[cls])(20)
    raw = {name: numpy.broadcast_to(numpy.float32(1), shape) for name, shape in shapes.items()}
    network_shapes = {}
    network = cfg_network.CfgNetwork(cls.make_sections(20, (416, 416)))
    for i, layer in network.convolutions():
        for name, shape in layer.darknet_blocks():
            network_shapes[f'network/layer{i}/{name}'] = shape
    arrays = yolo_base.convert_chainercv(network, cls.chainercv_links(), raw)
    weights = {k: v.shape for k, v in arrays.items() if not k.endswith('/N')}
    assert weights == network_shapes


def test_tiny_chainercv_file_loads_and_permutes(tmp_path, rng, chainercv):
    arrays = chainercv.random_file(rng, chainercv.yolov2_tiny_shapes(20))
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


def test_wrong_chainercv_file_names_every_bad_key(tmp_path, rng, chainercv):
    arrays = chainercv.random_file(rng, chainercv.yolov2_tiny_shapes(20))
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


def test_local_file_with_other_classes_and_n_fg_class(tmp_path, rng, chainercv):
    path = tmp_path / 'three.npz'
    numpy.savez(path, **chainercv.random_file(rng, chainercv.yolov2_tiny_shapes(3)))
    model = YOLOv2Tiny(n_fg_class=3, pretrained_model=str(path))
    assert model.n_fg_class == 3 and model.label_names is None
    model.use_preset('evaluate')
    _bboxes, labels, _ = model.predict([rng.uniform(0, 255, (3, 40, 50)).astype('f')])
    assert labels[0].max(initial=0) < 3


@pytest.mark.slow
def test_yolov3_chainercv_file_with_the_real_shapes(tmp_path, rng, chainercv):
    path = tmp_path / 'yolo_v3_voc0712.npz'
    numpy.savez(path, **chainercv.random_file(rng, chainercv.yolov3_shapes(20)))
    model = YOLOv3(pretrained_model=str(path))
    assert model.preprocessing == 'chainercv'
