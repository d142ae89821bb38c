"""``cvzoo train MODEL --data PATH``: the user's mistakes, each one line naming it (status 2,
nothing written), and short runs on tiny generated data of every task and format, whose
``model_final.npz`` ``cvzoo predict`` then uses."""

import numpy
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


# format -> (a small model of its task, its options): two iterations on 4 + 2 images of 64 px
RUNS = {
    'class_folders': ('small_cnn', ['--insize', '32']),
    'voc': ('ssd_tiny', ['--insize', '64']),
    'coco': ('ssd_tiny', ['--insize', '64']),
    'yolo': ('yolo_fastest', ['--insize', '64']),
    'segmentation_folders': ('segnet_basic', []),
    'coco_instances': ('mask_rcnn_fpn_resnet50', ['--min-size', '64', '--max-size', '96']),
    'coco_keypoints': ('keypointrcnn_resnet50_fpn', ['--min-size', '64', '--max-size', '96']),
}


@pytest.fixture(scope='module')
def datasets(tmp_path_factory):
    """format -> a folder of 4 training and 2 validation images of 64 px in it."""
    from cvzoo.testing import synthetic_data

    root = tmp_path_factory.mktemp('data')
    return {fmt: synthetic_data.make_dataset(fmt, root / fmt, n_train=4, n_val=2, size=64)
            for fmt in RUNS}


def _train(argv, capsys):
    """Run ``cvzoo train ARGV`` (status 0); return its standard output."""
    assert main.main(['train', *map(str, argv)]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _an_image(folder):
    return next(p for p in sorted(folder.rglob('*')) if p.suffix in ('.jpg', '.png')
                and 'label' not in str(p.relative_to(folder)))


@pytest.mark.parametrize('fmt', list(RUNS))
def test_each_format_trains_its_task_and_predict_uses_the_result(fmt, datasets, tmp_path,
                                                                 capsys, monkeypatch):
    import json

    from cvzoo.datasets import formats
    from cvzoo.models import model_info

    name, options = RUNS[fmt]
    if name == 'yolo_fastest':  # built from the cfg of its zoo entry
        monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(_shared_weights()))
    out = tmp_path / 'out'
    text = _train([name, '--data', datasets[fmt], '--iterations', '2', '--batchsize', '2',
                   '--out', out, *options], capsys)
    task = model_info(name)['task']
    assert formats.detect_format(datasets[fmt]) == fmt
    assert f'({fmt}, {task}): 4 training and 2 held-out examples' in text
    final = out / 'model_final.npz'
    assert f'model: {final}' in text
    assert f'predict: cvzoo predict IMAGE --model {name} --pretrained-model {final}' in text
    assert 'validation/main/' in text  # the held-out metric
    log = [json.loads(line) for line in (out / 'log').read_text().splitlines()]
    assert log[-1]['iteration'] == 2 and all(numpy.isfinite(e['main/loss']) for e in log)
    assert (out / 'loss.png').is_file()
    image = _an_image(datasets[fmt])
    assert main.main(['predict', str(image), '--model', name, '--pretrained-model',
                      str(final)]) == 0
    assert str(image) in capsys.readouterr().out


def _shared_weights():
    import pathlib

    folder = pathlib.Path(__file__).resolve().parents[3] / 'shared' / 'data' / 'weights'
    if not folder.is_dir():
        pytest.skip('needs ../shared/data/weights (the Darknet cfgs of the zoo)')
    return folder


def test_the_classifier_round_trip_names_the_data_s_classes(datasets, tmp_path, capsys):
    from cvzoo.testing.synthetic_data import TEXTURE_NAMES

    out = tmp_path / 'out'
    _train(['small_cnn', '--data', datasets['class_folders'], '--iterations', '2',
            '--batchsize', '2', '--insize', '32', '--out', out], capsys)
    image = _an_image(datasets['class_folders'])
    assert main.main(['predict', str(image), '--model', 'small_cnn', '--pretrained-model',
                      str(out / 'model_final.npz'), '--topk', '4']) == 0
    printed = [line.split()[-1] for line in capsys.readouterr().out.splitlines()[1:]]
    assert sorted(printed) == sorted(TEXTURE_NAMES)


def test_a_trained_file_continues_or_gets_a_new_head(datasets, tmp_path, capsys):
    """--pretrained-model FILE of the same classes keeps its head; of other classes (a
    detector's file fine-tuned on two of the data's three) gets one of the new count."""
    from cvzoo.models import get_model

    first = tmp_path / 'first'
    common = ['--iterations', '1', '--batchsize', '2', '--insize', '32']
    _train(['small_cnn', '--data', datasets['class_folders'], '--out', first, *common], capsys)
    again = tmp_path / 'again'
    _train(['small_cnn', '--data', datasets['class_folders'], '--out', again,
            '--pretrained-model', first / 'model_final.npz', '--iterations', '1',
            '--batchsize', '2'], capsys)
    model = get_model('small_cnn', pretrained_model=str(again / 'model_final.npz'))
    assert len(model.label_names) == 4
    two = tmp_path / 'two_classes'
    for name in ('checks', 'dots'):
        (two / name).mkdir(parents=True)
        for image in sorted((datasets['class_folders'] / 'train' / name).iterdir())[:2]:
            (two / name / image.name).write_bytes(image.read_bytes())
    other = tmp_path / 'other'
    _train(['small_cnn', '--data', two, '--out', other, '--pretrained-model',
            first / 'model_final.npz', '--iterations', '1', '--batchsize', '2',
            '--val-fraction', '0'], capsys)
    model = get_model('small_cnn', pretrained_model=str(other / 'model_final.npz'))
    assert model.label_names == ('checks', 'dots')


def test_no_held_out_data_evaluates_nothing(tmp_path, capsys):
    from cvzoo.testing import synthetic_data

    data = synthetic_data.make_dataset('class_folders', tmp_path / 'data', n_train=4, size=32)
    text = _train(['small_cnn', '--data', data, '--val-fraction', '0', '--iterations', '1',
                   '--batchsize', '2', '--insize', '32', '--out', tmp_path / 'o'], capsys)
    assert '4 training and no held-out examples' in text
    assert 'no held-out data: nothing evaluated' in text
    assert (tmp_path / 'o' / 'model_final.npz').is_file()


def test_a_batch_larger_than_the_data_names_it(datasets, tmp_path, monkeypatch, capsys):
    built = []
    monkeypatch.setattr('cvzoo.models.get_model', lambda *a, **k: built.append(1))
    line = _refused(['small_cnn', '--data', datasets['class_folders'], '--batchsize', '50',
                     '--out', tmp_path / 'out'], capsys)
    assert f'--batchsize 50: larger than the 4 training examples of --data ' \
        f'{datasets["class_folders"]}' in line
    assert not built and not (tmp_path / 'out').exists()


@pytest.mark.parametrize('name, fmt', [('ssd_tiny', 'coco_instances'),
                                       ('mask_rcnn_fpn_resnet50', 'coco_instances'),
                                       ('keypointrcnn_resnet50_fpn', 'coco_keypoints')])
def test_a_coco_json_is_parsed_once(name, fmt, datasets, monkeypatch, capsys):
    """--format auto tells the json's format (twice for a detector on masks: as it is, and
    for the model's task) and reads its examples from one parse of each json."""
    import json
    import pathlib

    parsed, load = [], json.load
    monkeypatch.setattr(json, 'load', lambda file, **kw: parsed.append(
        pathlib.Path(file.name).name) or load(file, **kw))
    line = _refused([name, '--data', datasets[fmt], '--batchsize', '50'], capsys)
    assert '--batchsize 50' in line  # refused after the data was read
    prefix = 'person_keypoints' if fmt == 'coco_keypoints' else 'instances'
    assert sorted(parsed) == [f'{prefix}_train.json', f'{prefix}_val.json']


def test_a_flat_voc_export_trains_a_detector(tmp_path, capsys):
    """LabelImg's and Roboflow's VOC export, xml files beside the images in train/ and
    valid/, is VOC data."""
    from cvzoo.testing import synthetic_data

    data = synthetic_data.make_dataset('voc', tmp_path / 'export', 4, 2, 64, layout='flat')
    out = tmp_path / 'out'
    text = _train(['ssd_tiny', '--data', data, '--insize', '64', '--iterations', '2',
                   '--batchsize', '2', '--out', out], capsys)
    assert '(voc, detection): 4 training and 2 held-out examples' in text
    assert (out / 'model_final.npz').is_file()


def test_a_detector_on_instance_data_reads_its_boxes(datasets, tmp_path, capsys):
    """A COCO json with masks trains a detector on its boxes (the format read for the
    model's task)."""
    text = _train(['ssd_tiny', '--data', datasets['coco_instances'], '--insize', '64',
                   '--iterations', '1', '--batchsize', '2', '--out', tmp_path / 'o'], capsys)
    assert '(coco, detection)' in text


def test_a_segmenter_on_detection_data_names_both_tasks(datasets, capsys):
    line = _refused(['segnet_basic', '--data', datasets['yolo']], capsys)
    assert 'segnet_basic is a semantic_segmentation model' in line
    assert 'detection data (yolo)' in line


def test_train_ssd_py_is_the_command_with_its_defaults(voc, tmp_path, capsys):
    """scripts/train_ssd.py and `cvzoo train ssd_tiny` write the same model from the same
    data and seed."""
    from cvzoo.core.serializers import npz
    from tests.helpers.scripts import load_script

    common = ['--insize', '64', '--batchsize', '2', '--iteration', '2', '--seed', '1']
    load_script('train_ssd').main(['--dataset', str(voc), '--model', 'ssd_tiny',
                                   '--out', str(tmp_path / 'script'), *common])
    _train(['ssd_tiny', '--data', voc, '--out', tmp_path / 'command', *common], capsys)
    script = npz.read_npz(tmp_path / 'script' / 'model_final.npz')
    command = npz.read_npz(tmp_path / 'command' / 'model_final.npz')
    assert script.keys() == command.keys()
    for key in script:
        numpy.testing.assert_array_equal(script[key], command[key], err_msg=key)
