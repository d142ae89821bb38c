import pathlib
import subprocess
import sys
import typing

import numpy
import pytest
from PIL import Image

from cvzoo.cli import commands, main
from cvzoo.models import discovery, registry, zoo
from tests.helpers import fake_cli_models, toy_models


@pytest.fixture
def image_path(tmp_path):
    return fake_cli_models.write_image(tmp_path)


def test_models_lists_every_registered_model(capsys):
    assert main.main(['models']) == 0
    out = capsys.readouterr().out
    from cvzoo.models import list_models

    for name in list_models():
        assert name in out


def test_models_markdown_table_has_header(capsys):
    assert main.main(['models', '--markdown']) == 0
    assert capsys.readouterr().out.startswith('| model | task | key |')


def test_unknown_model_is_a_clear_error(capsys):
    assert main.main(['download', 'resnet5', 'imagenet']) == 2
    assert "no model 'resnet5'" in capsys.readouterr().err


def test_predict_classification_prints_topk(monkeypatch, capsys, image_path):
    fake_cli_models.register(monkeypatch, fake_cli_models.FakeClassifier(), 'classification')
    assert main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k',
                      '--topk', '2']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ['0.7000', 'dog'] and lines[2].split() == ['0.2000', 'cat']
    assert len(lines) == 3


def test_predict_detection_draws_picture(monkeypatch, capsys, image_path, tmp_path):
    fake_cli_models.register(monkeypatch, fake_cli_models.FakeDetector(), 'detection')
    out = tmp_path / 'result.png'
    assert main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k',
                      '--out', str(out)]) == 0
    text = capsys.readouterr().out
    assert '1 detections' in text and 'dog' in text
    assert Image.open(out).size == (20, 16)


def test_predict_missing_image_names_it(monkeypatch, capsys, tmp_path):
    fake_cli_models.register(monkeypatch, fake_cli_models.FakeClassifier(), 'classification')
    missing = str(tmp_path / 'nope.jpg')
    assert main.main(['predict', missing, '--model', 'x', '--pretrained-model', 'k']) == 2
    assert 'nope.jpg' in capsys.readouterr().err


def test_predict_bad_device_is_refused_before_loading(monkeypatch, capsys, image_path):
    def never(*args, **kwargs):
        raise AssertionError('weights were loaded')

    monkeypatch.setattr(commands.zoo_api, 'get_model', never)
    with pytest.raises(SystemExit) as info:
        main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k',
                   '--device', 'gpu0'])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert 'argument --device' in err and "'gpu0'" in err


def test_unknown_weights_key_is_refused_before_loading(monkeypatch, capsys, image_path):
    def never(*args, **kwargs):
        raise AssertionError('weights were loaded')

    monkeypatch.setattr(commands.zoo_api, 'get_model', never)
    assert main.main(['predict', image_path, '--model', 'resnet50',
                      '--pretrained-model', 'imagenett']) == 2
    err = capsys.readouterr().err
    assert "'imagenett'" in err and 'imagenet' in err and len(err.splitlines()) == 1


def test_unknown_task_is_a_clear_error(capsys):
    assert main.main(['models', '--task', 'detektion']) == 2
    err = capsys.readouterr().err
    assert '--task' in err and "'detektion'" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize('error', [ValueError, TypeError, FileNotFoundError, RuntimeError])
def test_a_bug_is_not_reported_as_a_user_error(monkeypatch, capsys, image_path, error):
    class Buggy(fake_cli_models.FakeClassifier):
        def predict(self, imgs):
            raise error('a bug inside the model')

    fake_cli_models.register(monkeypatch, Buggy(), 'classification')
    with pytest.raises(error, match='a bug inside the model'):
        main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k'])
    assert 'error:' not in capsys.readouterr().err


def test_a_bug_exits_non_zero_with_its_traceback(tmp_path):
    # the installed entry point, in a process of its own, on a model whose predict fails
    script = tmp_path / 'run.py'
    script.write_text(
        'import sys, numpy\n'
        'from cvzoo.cli import commands, main\n'
        'class Buggy:\n'
        '    weights = {"k": None}\n'
        '    def to_device(self, device): return self\n'
        '    def predict(self, imgs): raise ValueError("a bug inside the model")\n'
        'commands.zoo_api.list_models = lambda task=None: ["x"]\n'
        'commands.zoo_api.get_model_class = lambda name: Buggy\n'
        'commands.zoo_api.get_model = lambda name, pretrained_model: Buggy()\n'
        'commands.zoo_api.model_info = lambda name: {"task": "classification"}\n'
        'sys.argv = ["cvzoo", "predict", sys.argv[1], "--model", "x", "--pretrained-model", "k"]\n'
        'from cvzoo.__main__ import main\n'
        'raise SystemExit(main())\n')
    image = tmp_path / 'img.png'
    Image.fromarray(numpy.zeros((4, 4, 3), numpy.uint8)).save(image)
    done = subprocess.run([sys.executable, str(script), str(image)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0
    assert 'Traceback' in done.stderr and 'ValueError: a bug inside the model' in done.stderr


@pytest.mark.parametrize('topk', ['-3', '0', 'two'])
def test_predict_topk_must_be_positive(monkeypatch, capsys, image_path, topk):
    fake_cli_models.register(monkeypatch, fake_cli_models.FakeClassifier(), 'classification')
    with pytest.raises(SystemExit) as info:
        main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k',
                   '--topk', topk])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert 'argument --topk: expected a whole number >= 1' in err and topk in err


def test_predict_several_images_and_out_an_existing_file(monkeypatch, capsys, image_path,
                                                         tmp_path):
    def never(*args, **kwargs):
        raise AssertionError('weights were loaded')

    monkeypatch.setattr(commands.zoo_api, 'get_model', never)
    existing = tmp_path / 'taken.png'
    existing.write_bytes(b'mine')
    assert main.main(['predict', image_path, image_path, '--model', 'x',
                      '--pretrained-model', 'k', '--out', str(existing)]) == 2
    err = capsys.readouterr().err
    assert '--out' in err and 'taken.png' in err and 'folder' in err
    assert existing.read_bytes() == b'mine'


class _ShortNamesClassifier(fake_cli_models.FakeClassifier):
    label_names = ('cat', 'dog')  # the model scores three classes


class _ShortNamesDetector(fake_cli_models.FakeDetector):
    label_names = ('cat',)  # the detector finds class 1


@pytest.mark.parametrize('model, task', [(_ShortNamesClassifier(), 'classification'),
                                         (_ShortNamesDetector(), 'detection')],
                         ids=['classification', 'detection'])
def test_predict_fewer_label_names_than_classes(monkeypatch, capsys, image_path, model, task):
    fake_cli_models.register(monkeypatch, model, task)
    assert main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k']) == 2
    err = capsys.readouterr().err
    assert '--pretrained-model' in err and 'label_names' in err


class _FakeSegmenter:
    def __init__(self):
        from cvzoo.datasets import camvid_label_names

        self.label_names = camvid_label_names

    def predict(self, imgs):
        label = numpy.zeros((16, 20), numpy.int32)
        label[:, 10:] = 3
        return [label]

    def to_device(self, device):
        return self


def test_predict_segmentation_overlays_dataset_colours(monkeypatch, capsys, image_path,
                                                        tmp_path):
    from cvzoo.datasets import camvid_label_colors

    fake_cli_models.register(monkeypatch, _FakeSegmenter(), 'semantic_segmentation')
    out = tmp_path / 'seg.png'
    assert main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k',
                      '--out', str(out)]) == 0
    text = capsys.readouterr().out
    assert '50.0%  Sky' in text and '50.0%  Road' in text
    picture = numpy.asarray(Image.open(out).convert('RGB'))
    assert picture.shape[0] >= 16 and picture.shape[1] > 20  # image plus a legend
    # The black image blended with CamVid's Road colour, not another palette's.
    road = numpy.asarray(camvid_label_colors[3], numpy.float32)
    numpy.testing.assert_allclose(picture[8, 15], road * 0.5, atol=2)


class _TrustToy(toy_models.OneParameterModel):
    """A one-parameter model whose weight entry publishes no sha256."""

    weights: typing.ClassVar[dict] = {}


@pytest.fixture
def trust_toy(http_server, monkeypatch, tmp_path):
    """'trust_toy' registered with key 'imagenet' served (UNPUBLISHED) from 127.0.0.1."""
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    discovery.import_all_models()
    monkeypatch.setattr(registry, '_REGISTRY', {})
    zoo.register('trust_toy', task='classification')(_TrustToy)
    entry = zoo.Weights(
        url=http_server.url_for('toy.npz'), sha256=zoo.UNPUBLISHED, source_format='cvzoo_npz',
        n_class=3, label_names=('a', 'b', 'c'),
        preset=zoo.Preset(size=8, mean=(0.0, 0.0, 0.0)),
        reported=zoo.Score('top1', 0.5, 'imagenet_val', 'a test'))
    monkeypatch.setattr(_TrustToy, 'weights', {'imagenet': entry})
    return http_server, pathlib.Path(zoo.trust_record_path(entry.main_file))


def _serve_toy_npz(http_server, shape):
    with open(http_server.root / 'toy.npz', 'wb') as file:
        numpy.savez(file, W=numpy.arange(numpy.prod(shape), dtype=numpy.float32).reshape(shape))


def test_download_trusts_only_a_file_that_loads(trust_toy, capsys):
    http_server, record = trust_toy
    _serve_toy_npz(http_server, (4,))  # the wrong file: W does not fit
    assert main.main(['download', 'trust_toy', 'imagenet']) == 2
    assert 'W' in capsys.readouterr().err and not record.exists()
    _serve_toy_npz(http_server, (3,))
    assert main.main(['download', 'trust_toy', 'imagenet']) == 0
    assert record.exists() and str(record)[:-len('.sha256')] in capsys.readouterr().out


def test_download_forget_removes_the_record(trust_toy, capsys):
    http_server, record = trust_toy
    _serve_toy_npz(http_server, (3,))
    assert main.main(['download', 'trust_toy', 'imagenet']) == 0
    assert record.exists()
    assert main.main(['download', '--forget', 'trust_toy', 'imagenet']) == 0
    assert f'removed {record}' in capsys.readouterr().out and not record.exists()
    assert main.main(['download', 'trust_toy', 'imagenet', '--forget']) == 0
    assert 'no trust record' in capsys.readouterr().out
