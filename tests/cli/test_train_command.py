"""``cvzoo train MODEL --data PATH``: the user's mistakes, each one line naming it (status 2,
nothing written), and short runs on tiny generated data of every task and format, whose
``model_final.npz`` ``cvzoo predict`` then uses."""

import pytest

from cvzoo.cli import main
from tests.helpers import train_runs


def _refused(argv, capsys):
    """The one stderr line of ``cvzoo train ARGV``, which must end with status 2."""
    status = _status(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and 'Traceback' not in err, err
    assert lines[0].startswith('cvzoo train: error: '), err
    return lines[0]


def _status(argv):
    try:
        return main.main(['train', *map(str, argv)])
    except SystemExit as exc:  # argparse's refusals
        return exc.code


@pytest.fixture
def voc(tmp_path):
    return train_runs.voc_folder(tmp_path / 'voc')


@pytest.fixture
def class_folders(tmp_path):
    return train_runs.class_folders(tmp_path / 'classes')


def test_unknown_model_names_it(voc, tmp_path, capsys):
    line = _refused(['ssd_tinyy', '--data', voc, '--out', tmp_path / 'out'], capsys)
    assert "'ssd_tinyy'" in line and 'ssd_tiny' in line  # the close name is offered
    assert not (tmp_path / 'out').exists()


def test_missing_data_option(capsys):
    assert '--data' in _refused(['small_cnn'], capsys)


def test_missing_data_path_names_it(tmp_path, capsys):
    line = _refused(['small_cnn', '--data', tmp_path / 'nothing'], capsys)
    assert '--data' in line and str(tmp_path / 'nothing') in line


@pytest.mark.parametrize('argv, texts', [
    (['--format', 'pascal'], ['--format', "'pascal'"]),
    (['--task', 'depth'], ['--task', "'depth'"]),
    (['--val-fraction', '1'], ['--val-fraction', "'1'"]),
    (['--val', 'v', '--val-fraction', '0.1'], ['--val-fraction', '--val']),
    (['--iterations', '3', '--epochs', '1'], ['--epochs', '--iterations']),
    (['--iterations', '0'], ['--iterations', '>= 1']),
    (['--lr', 'nan'], ['--lr', "'nan'"]),
    (['--autocast', 'int8'], ['--autocast', "'int8'"]),
    (['--communicator', 'gloo'], ['--communicator', "'gloo'"]),
], ids=lambda value: value[0] if isinstance(value[0], str) else None)
def test_option_mistakes_are_one_line(argv, texts, class_folders, tmp_path, capsys):
    line = _refused(['small_cnn', '--data', class_folders, '--out', tmp_path / 'out', *argv],
                    capsys)
    for text in texts:
        assert text in line
    assert not (tmp_path / 'out').exists()


def test_model_of_another_task_than_the_format_names_both(voc, tmp_path, capsys):
    line = _refused(['small_cnn', '--data', voc, '--format', 'voc', '--out', tmp_path / 'o'],
                    capsys)
    assert 'small_cnn is a classification model' in line and 'detection data (voc)' in line
    assert not (tmp_path / 'o').exists()


def test_task_other_than_the_model_s(voc, capsys):
    line = _refused(['ssd_tiny', '--data', voc, '--task', 'semantic_segmentation'], capsys)
    assert '--task semantic_segmentation' in line and 'ssd_tiny is a detection model' in line


def test_named_dataset_of_another_task(capsys):
    line = _refused(['ssd_tiny', '--data', 'digits'], capsys)
    assert 'ssd_tiny is a detection model' in line and 'digits is classification' in line


def test_model_option_the_model_does_not_take(class_folders, capsys):
    line = _refused(['resnet50', '--data', class_folders, '--insize', '32'], capsys)
    assert '--insize 32' in line and 'resnet50 takes no insize' in line


def test_cuda_graph_on_the_cpu(class_folders, capsys):
    assert '--cuda-graph' in _refused(['small_cnn', '--data', class_folders, '--cuda-graph'],
                                      capsys)


def test_unknown_weight_key_names_the_keys(class_folders, monkeypatch, capsys):
    pytest.importorskip('cvzoo.datasets.formats')
    line = _refused(['resnet50', '--data', class_folders, '--pretrained-model', 'imagenett',
                     '--val-fraction', '0.5'], capsys)
    assert "'imagenett'" in line and 'imagenet' in line
