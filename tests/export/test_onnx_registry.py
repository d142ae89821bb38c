"""Every registered model exported to ONNX and run by onnxruntime, against cvzoo.

Each model is built with random weights and few classes, exported on one small input
(batch 1) and run by onnxruntime on two other images (batch 2, which also checks the
dynamic batch axis); the outputs must equal cvzoo's forward. A model that cannot be
exported must say which function stops it (``EXPECTED_UNSUPPORTED``).

The batch normalisations' statistics are first set to those of the test images
(tests/export/batch_statistics.py).
"""

import os

import numpy
import pytest

from cvzoo.core import backend, config
from cvzoo.export import UnsupportedFunctionError, graph_trace, to_onnx
from cvzoo.models import get_model_class, list_models, model_info
from tests.export import batch_statistics

ort = pytest.importorskip('onnxruntime')
pytest.importorskip('onnx')

N_CLASS = 3
N_FG_CLASS = 2
BUILD_KWARGS = {
    'pspnet_resnet50': {'input_size': (64, 64)},
    'pspnet_resnet101': {'input_size': (64, 64)},
    'deeplab_v3plus_xception65': {'min_input_size': (64, 64)},
    'espnet': {'n_class': 5},
    'faster_rcnn_vgg16': {'min_size': 64, 'max_size': 96},
    'faster_rcnn_fpn_resnet50': {'min_size': 64, 'max_size': 96},
    'faster_rcnn_fpn_resnet101': {'min_size': 64, 'max_size': 96},
    'fasterrcnn_resnet50_fpn': {'min_size': 64, 'max_size': 96},
    'fasterrcnn_resnet50_fpn_v2': {'min_size': 64, 'max_size': 96},
    'retinanet_resnet50_fpn': {'min_size': 64, 'max_size': 96},
}
# the network input side; classifiers take 32 unless their head fixes it
INPUT_SIDE = {'vgg16': 224, 'ssd300': 300, 'ssd300_vgg16': 300, 'ssd512': 512,
              'small_cnn': 32, 'resnet152': 64, 'se_resnet152': 64}
TASK_INPUT_SIDE = {'classification': 32, 'semantic_segmentation': 64, 'detection': 64}
# the two-stage detectors crop features at proposals found outside the graph
EXPECTED_UNSUPPORTED = {
    'faster_rcnn_vgg16': 'RoIPooling2D',
    'faster_rcnn_fpn_resnet50': 'RoIAlign2D',
    'faster_rcnn_fpn_resnet101': 'RoIAlign2D',
    'fasterrcnn_resnet50_fpn': 'RoIAlign2D',
    'fasterrcnn_resnet50_fpn_v2': 'RoIAlign2D',
}
# the largest inputs (their heads fix the input size); the rest take about a minute
SLOW = {'ssd512', 'vgg16'}
NEEDS_CFG = ('yolo_fastest', 'yolo_fastest_xl')
RTOL = 1e-4


def _cases():
    # NOTE: the tasks whose export this file knows how to check (instance segmenters
    # are left to a test of their own)
    names = [name for name in set(list_models()) if model_info(name)['task'] in TASK_INPUT_SIDE]
    for name in sorted(names):
        marks = [pytest.mark.slow] if name in SLOW else []
        yield pytest.param(name, id=name, marks=marks)


def _build(name, request):
    if name in NEEDS_CFG:
        shared_data = request.getfixturevalue('shared_data')
        request.getfixturevalue('monkeypatch').setenv(
            'CVZOO_WEIGHTS_MIRROR', str(shared_data / 'weights'))
    task = model_info(name)['task']
    kwargs = dict(BUILD_KWARGS.get(name, {}))
    kwargs.setdefault('n_fg_class' if task == 'detection' else 'n_class',
                      N_FG_CLASS if task == 'detection' else N_CLASS)
    numpy.random.seed(0)
    model = get_model_class(name)(**kwargs)
    return model, INPUT_SIDE.get(name, TASK_INPUT_SIDE[task])


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        outputs = graph_trace.flatten_outputs(model(x))
    return [backend.to_numpy(y.array) for y in outputs]


def assert_onnx_matches(path, model, x):
    """onnxruntime's outputs on x equal cvzoo's, to RTOL of their largest magnitude."""
    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    got = session.run(None, {'input': x})
    want = _forward(model, x)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        scale = max(1.0, float(numpy.abs(b).max())) if b.size else 1.0
        numpy.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale,
                                      err_msg=f'output {i}')


@pytest.mark.parametrize('name', _cases())
def test_export_matches_cvzoo(name, request, tmp_path):
    model, side = _build(name, request)
    rng = numpy.random.RandomState(1)
    example = rng.standard_normal((1, 3, side, side)).astype(numpy.float32)
    x = rng.standard_normal((2, 3, side, side)).astype(numpy.float32)
    path = str(tmp_path / f'{name}.onnx')
    if name in EXPECTED_UNSUPPORTED:
        with pytest.raises(UnsupportedFunctionError) as info:
            to_onnx(model, example, path)
        assert info.value.function_name == EXPECTED_UNSUPPORTED[name]
        assert type(model).__name__ in str(info.value)
        assert not os.path.exists(path)
        return
    batch_statistics.set_batch_statistics(model, x)
    assert to_onnx(model, example, path) == path
    assert_onnx_matches(path, model, x)
