"""The shipped detector fine-tuned on one's own classes: scripts/train_yolo.py writes a
model_final.npz that `get_model` and `cvzoo predict` rebuild from the file alone."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.cli import main
from cvzoo.models import get_model
from cvzoo.models.detection.yolo.yolo_fastest import YoloFastestXL
from cvzoo.utils import download
from tests.helpers.scripts import load_script


def _go_offline(monkeypatch, home):
    """An empty $CVZOO_HOME, no mirror, and every download failing."""
    monkeypatch.setenv('CVZOO_HOME', str(home))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)

    def refuse(url, *args, **kwargs):
        raise errors.DownloadError(f'{url}: no network in this test')

    monkeypatch.setattr(download, 'download', refuse)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    _go_offline(monkeypatch, tmp_path / 'home')


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """model_final.npz of two iterations of train_yolo.py on six generated images, and the
    offline setting the tests use it in."""
    tmp_path = tmp_path_factory.mktemp('finetune')
    with pytest.MonkeyPatch.context() as monkeypatch:
        _go_offline(monkeypatch, tmp_path / 'home')
        folder = load_script('make_shapes_dataset').write_dataset(tmp_path / 'shapes', 4, 2)
        out = tmp_path / 'result'
        load_script('train_yolo').main([
            '--dataset', str(folder), '--model', 'yolo_fastest_xl', '--pretrained-model',
            'voc', '--insize', '64', '--iteration', '2', '--batchsize', '2', '--out',
            str(out)])
        yield folder, out / 'model_final.npz'


def test_the_trained_file_rebuilds_the_model_alone(trained, offline):
    folder, path = trained
    model = get_model('yolo_fastest_xl', pretrained_model=str(path))
    assert model.n_fg_class == 3 and model.insize == (64, 64)
    assert model.label_names == ('circle', 'square', 'triangle')
    assert all(head['n_class'] == 3 for head in model.network.heads)
    # the fine-tuned parameters, not the VOC ones: the backbone moved in training
    voc = YoloFastestXL(pretrained_model='voc')
    assert not numpy.array_equal(model.network.layer0.conv.W.array,
                                 voc.network.layer0.conv.W.array)
    bboxes, labels, scores = model.predict([str(folder / 'JPEGImages' / '000004.jpg')])
    assert len(bboxes) == 1 and (labels[0] < 3).all()


def test_predict_takes_the_trained_file(trained, offline, capsys):
    folder, path = trained
    image = str(folder / 'JPEGImages' / '000004.jpg')
    assert main.main(['predict', image, '--model', 'yolo_fastest_xl', '--pretrained-model',
                      str(path), '--score-thresh', '0.0']) == 0
    out = capsys.readouterr().out
    assert out.startswith(f'{image}: ')
    names = {line.split()[1] for line in out.splitlines()[1:]}
    assert names and names <= {'circle', 'square', 'triangle'}


@pytest.mark.parametrize('insize, expected', [(96, (96, 96)), ((64, 96), (64, 96))])
def test_insize_sets_the_input_size(offline, insize, expected):
    assert YoloFastestXL(pretrained_model='voc', insize=insize).insize == expected


@pytest.mark.parametrize('insize', [0, (64,), 'big'])
def test_a_bad_insize_is_refused_by_name(offline, insize):
    with pytest.raises(ValueError, match='insize'):
        YoloFastestXL(insize=insize)
