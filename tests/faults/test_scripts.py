"""The scripts of scripts/ under user mistakes: each is run as a program (its ``__main__``
block, through cvzoo.cli.entry) and must end with ONE line ``SCRIPT.py: error: ...``
naming the argument, exit status 2, no traceback and nothing written; a bug still shows
its traceback. The data are the tiny folders of tests.helpers.train_runs."""

import sys

import pytest

from cvzoo import errors
from cvzoo.cli import entry
from cvzoo.datasets import formats
from tests.helpers import malicious_pickles, train_runs
from tests.helpers.scripts import SCRIPTS, run_script

TRAIN_SCRIPTS = ('train_ssd', 'train_yolo', 'train_classifier', 'train_faster_rcnn',
                 'train_mask_rcnn')
EVAL_SCRIPTS = {  # the arguments each needs besides the one under test, its batch option
    'eval_detection': (['--model', 'ssd_tiny', '--pretrained-model', 'x'], '--batchsize'),
    'eval_imagenet': (['--model', 'small_cnn', '--dataset', 'd'], '--batchsize'),
    'eval_instance_segmentation': (['--model', 'mask_rcnn_fpn_resnet50',
                                    '--pretrained-model', 'x'], '--batch-size'),
    'eval_keypoint_detection': (['--model', 'keypointrcnn_resnet50_fpn',
                                 '--pretrained-model', 'x'], '--batch-size'),
    'eval_semantic_segmentation': (['--model', 'espnet', '--pretrained-model', 'x'],
                                   '--batchsize'),
}


def _run(name, argv, monkeypatch, capsys):
    """(exit status, the one stderr line) of ``scripts/<name>.py ARGV``; fails on more."""
    status = run_script(name, [str(a) for a in argv], monkeypatch)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and 'Traceback' not in err, err
    assert lines[0].startswith(f'{name}.py: error: '), err
    return status, lines[0]


@pytest.fixture
def no_cupy(monkeypatch):
    """A machine without CuPy, also under --fake-cuda: ``import cupy`` fails."""
    from cvzoo.core import backend

    monkeypatch.setitem(sys.modules, 'cupy', None)
    monkeypatch.setattr(backend, '_cupy', None)


def test_every_script_ends_through_the_shared_entry():
    """The wiring the cases below test, in every script (some are too slow to run)."""
    for path in sorted(SCRIPTS.glob('*.py')):
        source = path.read_text()
        assert 'entry.ArgumentParser(' in source, path.name
        assert "if __name__ == '__main__':\n    entry.run(main" in source \
            or "if __name__ == '__main__':\n    train_options.run(main" in source, path.name
        assert 'argparse.ArgumentParser(' not in source, path.name


# case: (arguments, the texts the line holds)
TRAIN_ARGUMENTS = {
    'batchsize_0': (['--batchsize', '0'], ['--batchsize', '>= 1', "'0'"]),
    'iteration_0': (['--iteration', '0'], ['--iteration', '>= 1', "'0'"]),
    'iteration_negative': (['--iteration', '-3'], ['--iteration', "'-3'"]),
    'lr_nan': (['--lr', 'nan'], ['--lr', 'finite', "'nan'"]),
    'lr_negative': (['--lr', '-1'], ['--lr', '> 0', "'-1'"]),
    'lr_infinite': (['--lr', 'inf'], ['--lr', "'inf'"]),
    'out_parent_missing': (['--out', '{tmp}/missing/out'], ['--out', 'missing',
                                                             'create it first']),
    'device_without_cupy': (['--device', 'cuda:0'], ['--device', 'CuPy']),
    'device_misspelt': (['--device', 'gpu'], ['--device', "'gpu'"]),
}


@pytest.mark.parametrize('case', list(TRAIN_ARGUMENTS))
@pytest.mark.parametrize('name', TRAIN_SCRIPTS)
def test_train_argument_mistake_is_one_line(name, case, tmp_path, monkeypatch, capsys, no_cupy):
    argv, texts = TRAIN_ARGUMENTS[case]
    argv = [a.format(tmp=tmp_path) for a in argv]
    dataset = ['--dataset', str(tmp_path / 'd.json')] if name == 'train_mask_rcnn' else []
    status, line = _run(name, dataset + argv, monkeypatch, capsys)
    assert status == 2
    for text in texts:
        assert text in line
    assert not (tmp_path / 'missing').exists()


@pytest.mark.parametrize('name, argv', [
    ('train_ssd', ['--insize', '0']), ('train_yolo', ['--insize', '0']),
    ('train_classifier', ['--insize', '0']), ('train_classifier', ['--epoch', '0']),
    ('train_yolo', ['--epoch', '-1']), ('train_yolo', ['--jitter', '1.5']),
    ('train_ssd', ['--max-expand-ratio', '0.5']), ('train_faster_rcnn', ['--min-size', '0']),
    ('train_mask_rcnn', ['--max-size', '-2']), ('train_ssd', ['--format', 'pascal']),
    ('train_classifier', ['--val-fraction', '1.5']),
    ('train_yolo', ['--cfg', '{tmp}/missing.cfg']),
], ids=lambda value: value if isinstance(value, str) else value[0])
def test_train_script_option_mistake_is_one_line(name, argv, tmp_path, monkeypatch, capsys):
    argv = [a.format(tmp=tmp_path) for a in argv]
    status, line = _run(name, argv, monkeypatch, capsys)
    assert status == 2
    assert f'argument {argv[0]}' in line and argv[1] in line


@pytest.mark.parametrize('name', ['ssd', 'yolo', 'classifier'])
def test_batch_larger_than_the_training_set_is_refused_at_once(name, tmp_path, monkeypatch,
                                                               capsys):
    out = tmp_path / 'out'
    argv = train_runs.train_args(name, tmp_path, out, 2) + ['--batchsize', '500']
    model_built = []
    monkeypatch.setattr('cvzoo.models.get_model', lambda *a, **k: model_built.append(1))
    status, line = _run(f'train_{name}', argv, monkeypatch, capsys)
    assert status == 2
    data = str(tmp_path / 'data')
    n_train = len(formats.load_training_data(data).train)
    assert f'--batchsize 500: larger than the {n_train} training examples' in line
    assert str(tmp_path / 'data') in line
    assert not model_built and not out.exists()


def test_batch_larger_than_the_json_s_images_is_refused_at_once(tmp_path, monkeypatch, capsys):
    """train_mask_rcnn.py counts the json's images (3 with shapes, 2 without) before it
    builds the model."""
    from cvzoo.testing import synthetic_data

    root = synthetic_data.write_coco(tmp_path, synthetic_data.shape_scenes(3, 48),
                                     kind='instances', unannotated=2)
    train = root / 'annotations' / 'instances_train.json'
    model_built = []
    monkeypatch.setattr('cvzoo.models.get_model', lambda *a, **k: model_built.append(1))
    status, line = _run('train_mask_rcnn', ['--dataset', train, '--batchsize', '6',
                                            '--out', tmp_path / 'out'], monkeypatch, capsys)
    assert status == 2
    n_train = len(formats.load_training_data(train).train)
    assert f'--batchsize 6: larger than the {n_train} training examples of --dataset ' \
        f'{train}' in line
    assert not model_built and not (tmp_path / 'out').exists()


@pytest.mark.parametrize('name', ['train_ssd', 'train_yolo', 'train_classifier'])
def test_missing_dataset_folder_is_one_line(name, tmp_path, monkeypatch, capsys):
    status, line = _run(name, ['--dataset', tmp_path / 'nodata', '--out', tmp_path / 'out'],
                        monkeypatch, capsys)
    assert status == 2 and str(tmp_path / 'nodata') in line
    assert not (tmp_path / 'out').exists()


def test_trained_file_of_another_model_given_to_a_train_script(tmp_path, monkeypatch, capsys):
    import numpy

    from cvzoo.models import zoo
    from cvzoo.models.weights.trained_model import save_trained_model

    path = tmp_path / 'model_final.npz'
    model = zoo.get_model('small_cnn', n_class=2, insize=8)
    model(numpy.zeros((1, 3, 8, 8), numpy.float32))
    save_trained_model(model, str(path), 'small_cnn', n_class=2, insize=8)
    argv = train_runs.train_args('ssd', tmp_path, tmp_path / 'out', 2)
    status, line = _run('train_ssd', argv + ['--pretrained-model', path], monkeypatch, capsys)
    assert status == 2
    assert str(path) in line and "'small_cnn'" in line and "'ssd_tiny'" in line
    assert not (tmp_path / 'out' / 'model_final.npz').exists()


@pytest.mark.parametrize('name', ['classifier', 'ssd'])
def test_resume_from_a_truncated_snapshot_is_one_line(name, tmp_path, monkeypatch, capsys):
    """The snapshot reader names the file (a CorruptFileError); the script ends in one line."""
    out = tmp_path / 'out'
    out.mkdir()
    snapshot = out / 'snapshot_iter_1'
    snapshot.write_bytes(b'PK\x03\x04' + b'\0' * 40)
    resume = ['--resume', snapshot] if name == 'classifier' else ['--resume']
    argv = train_runs.train_args(name, tmp_path, out, 2) + resume
    status, line = _run(f'train_{name}', argv, monkeypatch, capsys)
    assert status == 2 and str(snapshot) in line
    assert not (out / train_runs.FINAL[name]).exists()


def test_convert_weights_of_a_pickle_that_runs_code_is_one_line(tmp_path, monkeypatch, capsys):
    canary = tmp_path / 'ran'
    src = tmp_path / 'evil.pth'
    malicious_pickles.write_raw_pickle(src, malicious_pickles.code_payloads(canary)['os_system'],
                                       'zip')
    dst = tmp_path / 'out.npz'
    status, line = _run('convert_weights', [src, dst, '--model', 'small_cnn'], monkeypatch,
                        capsys)
    assert status == 2
    assert str(src) in line and 'refused' in line and 'os' in line and 'system' in line
    assert not canary.exists() and not dst.exists()


@pytest.mark.parametrize('argv, named', [
    (['{tmp}/missing.pth', '{tmp}/out.npz', '--model', 'small_cnn'], 'argument src'),
    (['{tmp}/in.pth', '{tmp}/missing/out.npz', '--model', 'small_cnn'], 'argument dst'),
    (['{tmp}/in.pth', '{tmp}/out.npz', '--model', 'small_cnn', '--n-class', '-2'],
     'argument --n-class'),
    (['{tmp}/in.pth', '{tmp}/out.npz', '--model', 'small_cnm'], "no model 'small_cnm'"),
], ids=['src_missing', 'dst_folder_missing', 'n_class_negative', 'unknown_model'])
def test_convert_weights_argument_mistake_is_one_line(argv, named, tmp_path, monkeypatch,
                                                      capsys):
    (tmp_path / 'in.pth').write_bytes(b'')
    status, line = _run('convert_weights', [a.format(tmp=tmp_path) for a in argv],
                        monkeypatch, capsys)
    assert status == 2 and named in line
    assert not (tmp_path / 'out.npz').exists()


@pytest.mark.parametrize('argv, named', [
    (['BATCH', '0'], 'BATCH'), (['--limit', '-1'], '--limit'),
    (['--device', 'cuda:0'], '--device'), (['--device', 'gpu'], '--device'),
], ids=['batch_0', 'limit_negative', 'device_without_cupy', 'device_misspelt'])
@pytest.mark.parametrize('name', list(EVAL_SCRIPTS))
def test_eval_argument_mistake_is_one_line(name, argv, named, monkeypatch, capsys, no_cupy):
    required, batch_option = EVAL_SCRIPTS[name]
    argv = [batch_option if a == 'BATCH' else a for a in argv]
    status, line = _run(name, required + argv, monkeypatch, capsys)
    assert status == 2 and f'argument {argv[0]}' in line


def test_eval_negative_class_count_is_one_line(monkeypatch, capsys):
    required, _ = EVAL_SCRIPTS['eval_semantic_segmentation']
    status, line = _run('eval_semantic_segmentation', required + ['--n-class', '-3'],
                        monkeypatch, capsys)
    assert status == 2 and 'argument --n-class' in line and "'-3'" in line


def test_eval_unknown_model_is_one_line(monkeypatch, capsys):
    status, line = _run('eval_detection', ['--model', 'ssd_tyni', '--pretrained-model', 'x'],
                        monkeypatch, capsys)
    assert status == 2 and "no model 'ssd_tyni'" in line and 'ssd_tiny' in line


@pytest.mark.parametrize('argv, named', [
    (['--out', '{tmp}/missing/shapes'], '--out'), (['--out', '{tmp}/s', '--size', '4'], '--size'),
    (['--out', '{tmp}/s', '--n-train', '0'], '--n-train'),
    (['--out', '{tmp}/s', '--format', 'yolo', '--layout', 'flat'], '--layout'),
], ids=['out_parent_missing', 'size_too_small', 'n_train_0', 'layout_of_another_format'])
def test_make_shapes_dataset_argument_mistake_is_one_line(argv, named, tmp_path, monkeypatch,
                                                          capsys):
    status, line = _run('make_shapes_dataset', [a.format(tmp=tmp_path) for a in argv],
                        monkeypatch, capsys)
    assert status == 2 and f'argument {named}' in line
    assert not (tmp_path / 'missing').exists() and not (tmp_path / 's').exists()


@pytest.mark.parametrize('name', sorted(p.stem for p in SCRIPTS.glob('*.py')))
def test_unknown_option_is_one_line_without_usage(name, monkeypatch, capsys):
    status, line = _run(name, ['--no-such-option'], monkeypatch, capsys)
    # argparse names a missing required argument before an unknown one
    assert status == 2
    assert '--no-such-option' in line or 'the following arguments are required' in line


def test_a_cvzoo_error_is_one_line_and_a_bug_keeps_its_traceback(capsys):
    def mistake(argv):
        raise errors.WeightLoadError('w.npz does not fit:\n  missing: a/W\n  unexpected: b')

    def bug(argv):
        raise KeyError('a bug')

    def arrays_on_two_devices(argv):  # the program made both: a bug, though a CvzooError
        raise errors.DeviceMismatchError('x is on cuda:0, y on cpu')

    assert entry.call('prog.py', mistake, None) == 2
    assert capsys.readouterr().err == ('prog.py: error: w.npz does not fit: missing: a/W; '
                                       'unexpected: b\n')
    for function, error in ((bug, KeyError), (arrays_on_two_devices, errors.DeviceMismatchError)):
        with pytest.raises(error):
            entry.call('prog.py', function, None)
        assert capsys.readouterr().err == ''


def test_status_of_main_is_the_exit_status():
    assert entry.call('prog.py', lambda: 1) == 1
    assert entry.call('prog.py', lambda: {'map': 0.5}) == 0  # an evaluation's report
    assert entry.call('prog.py', lambda: True) == 0
