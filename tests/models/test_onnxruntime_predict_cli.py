"""cvzoo predict --runtime onnxruntime: the network of the model runs in onnxruntime; a
model that runs only in cvzoo (its class's ``runtimes``) is refused before its weights
load."""

import dataclasses

import numpy
import pytest
from PIL import Image

from cvzoo.cli import commands, main
from cvzoo.export import onnxruntime_network
from cvzoo.testing.small_models import build_small_model

pytest.importorskip('onnxruntime')
pytest.importorskip('onnx')


@pytest.fixture
def image_path(tmp_path):
    path = tmp_path / 'img.png'
    pixels = numpy.random.RandomState(0).randint(0, 255, (40, 48, 3)).astype(numpy.uint8)
    Image.fromarray(pixels).save(path)
    return str(path)


def _printed_classes(capsys):
    lines = capsys.readouterr().out.splitlines()[1:]
    return [line.split()[1] for line in lines], [float(line.split()[0]) for line in lines]


def test_runtime_reaches_the_models_predict(monkeypatch, capsys, image_path):
    _, model = build_small_model('small_cnn')
    model.preset = dataclasses.replace(model.preset, size=32)
    monkeypatch.setattr(commands.zoo_api, 'get_model', lambda name, pretrained_model: model)
    argv = ['predict', image_path, '--model', 'resnet50', '--pretrained-model', 'imagenet',
            '--topk', '3']
    assert main.main(argv) == 0
    want = _printed_classes(capsys)
    assert onnxruntime_network.CACHE_ATTRIBUTE not in vars(model)
    assert main.main([*argv, '--runtime', 'onnxruntime']) == 0
    got = _printed_classes(capsys)
    assert onnxruntime_network.CACHE_ATTRIBUTE in vars(model)
    assert got[0] == want[0]
    numpy.testing.assert_allclose(got[1], want[1], atol=2e-4)


def test_model_without_the_runtime_is_refused_before_loading(monkeypatch, capsys,
                                                             image_path):
    def never(*args, **kwargs):
        raise AssertionError('weights were loaded')

    monkeypatch.setattr(commands.zoo_api, 'get_model', never)
    assert main.main(['predict', image_path, '--model', 'faster_rcnn_vgg16',
                      '--pretrained-model', 'voc07', '--runtime', 'onnxruntime']) == 2
    err = capsys.readouterr().err
    assert '--runtime onnxruntime' in err and 'FasterRCNNVGG16' in err
