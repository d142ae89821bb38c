"""The command line under bad arguments: argparse errors exit 2 naming the option; user
errors (cvzoo's error classes) exit 2 with one line naming the argument or file. The fake
models are those of tests.helpers.fake_cli_models."""

import sys

import pytest

from cvzoo import errors
from cvzoo.cli import commands, main
from tests.helpers import fake_cli_models


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """The fake classifier registered as model 'x', key 'k', and the image img.png."""
    fake_cli_models.register(monkeypatch, fake_cli_models.FakeClassifier(), 'classification')
    fake_cli_models.write_image(tmp_path)


@pytest.fixture
def real_registry(tmp_path):
    """The same image, with the real registry."""
    fake_cli_models.write_image(tmp_path)


def _predict(*extra, image='img.png'):
    return lambda tmp: ['predict', str(tmp / image), '--model', 'x', '--pretrained-model', 'k',
                        *extra]


# case: (argv from tmp_path, the text stderr holds)
ARGPARSE_ERRORS = {
    'unknown_flag': (_predict('--colour'), '--colour'),
    'topk_zero': (_predict('--topk', '0'), '--topk'),
    'topk_negative': (_predict('--topk', '-3'), '--topk'),
    'topk_not_a_number': (_predict('--topk', 'many'), '--topk'),
    'device_unknown': (_predict('--device', 'tpu'), '--device'),
    'no_command': (lambda tmp: [], 'command'),
    'unknown_command': (lambda tmp: ['predcit'], 'predcit'),
}


@pytest.mark.parametrize('case', list(ARGPARSE_ERRORS), ids=list(ARGPARSE_ERRORS))
def test_bad_flag_exits_2_naming_it(cli, tmp_path, capsys, case):
    argv, text = ARGPARSE_ERRORS[case]
    with pytest.raises(SystemExit) as info:
        main.main(argv(tmp_path))
    assert info.value.code == 2
    assert text in capsys.readouterr().err


def _existing_out(tmp):
    (tmp / 'taken.png').write_bytes(b'mine')
    return ['predict', str(tmp / 'img.png'), str(tmp / 'img.png'), '--model', 'x',
            '--pretrained-model', 'k', '--out', str(tmp / 'taken.png')]


# case: (argv from tmp_path, the texts the one line of stderr holds)
USER_ERRORS = {
    'missing_image': (_predict(image='nope.jpg'), ['nope.jpg']),
    'image_is_a_folder': (_predict(image='.'), ['IMAGE', 'folder']),
    'out_existing_file_with_several_images': (_existing_out, ['--out', 'taken.png']),
    'unknown_model_with_suggestion': (lambda tmp: ['download', 'resnet5', 'imagenet'],
                                      ["'resnet5'", 'resnet50']),
    'unknown_key_with_suggestion': (lambda tmp: ['download', 'resnet50', 'imagenett'],
                                    ["'imagenett'", 'imagenet']),
    'unknown_task': (lambda tmp: ['models', '--task', 'detektion'], ['--task', 'detektion']),
}


@pytest.mark.parametrize('case', list(USER_ERRORS))
def test_user_error_is_one_line_naming_the_argument(request, tmp_path, capsys, case):
    request.getfixturevalue('real_registry' if case.startswith('unknown_') else 'cli')
    argv, texts = USER_ERRORS[case]
    assert main.main(argv(tmp_path)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    for text in texts:
        assert text in err
    if case.startswith('out_'):
        assert (tmp_path / 'taken.png').read_bytes() == b'mine'


def _status_and_error(argv, capsys):
    """(exit status, stderr) of the command line, whether argparse exits or a subcommand
    returns its status."""
    try:
        status = main.main(argv)
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def _assert_one_line(err, *texts):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert 'Traceback' not in err
    for text in texts:
        assert text in lines[0], err


@pytest.fixture
def no_loading(monkeypatch):
    """Weights must not be loaded: get_model fails the test."""
    def never(*args, **kwargs):
        raise AssertionError('the model was built')

    monkeypatch.setattr(commands.zoo_api, 'get_model', never)


@pytest.fixture
def no_cupy(monkeypatch):
    """A machine without CuPy, also under --fake-cuda: ``import cupy`` fails."""
    from cvzoo.core import backend

    monkeypatch.setitem(sys.modules, 'cupy', None)
    monkeypatch.setattr(backend, '_cupy', None)


@pytest.mark.parametrize('device', ['cuda:0', 'cuda'])
def test_predict_on_cuda_without_cupy_is_one_line(cli, no_cupy, no_loading, tmp_path, capsys,
                                                  device):
    status, err = _status_and_error(_predict('--device', device)(tmp_path), capsys)
    assert status == 2
    _assert_one_line(err, 'cvzoo predict: error:', '--device', device, 'CuPy', 'cvzoo[cuda]')


def test_predict_on_a_gpu_that_is_not_there_is_one_line(cli, stand_in, no_loading, tmp_path,
                                                       capsys):
    status, err = _status_and_error(_predict('--device', 'cuda:7')(tmp_path), capsys)
    assert status == 2
    _assert_one_line(err, '--device', 'cuda:7', '2 visible CUDA GPU')


@pytest.mark.parametrize('value', ['nan', '-0.5', '2', 'inf', 'high'])
def test_predict_score_thresh_outside_0_1_is_one_line(cli, no_loading, tmp_path, capsys,
                                                      value):
    status, err = _status_and_error(_predict('--score-thresh', value)(tmp_path), capsys)
    assert status == 2
    _assert_one_line(err, '--score-thresh', '[0, 1]', repr(value))


def test_predict_out_in_a_missing_folder_is_refused_before_the_model_runs(
        cli, no_loading, tmp_path, capsys):
    out = tmp_path / 'missing_dir' / 'x.png'
    status, err = _status_and_error(_predict('--out', str(out))(tmp_path), capsys)
    assert status == 2
    _assert_one_line(err, '--out', 'missing_dir', 'create it first')
    assert not (tmp_path / 'missing_dir').exists()


def test_predict_out_ending_in_a_slash_is_a_folder_made_for_the_picture(monkeypatch, tmp_path,
                                                                       capsys):
    fake_cli_models.register(monkeypatch, fake_cli_models.FakeDetector(), 'detection')
    fake_cli_models.write_image(tmp_path)
    folder = tmp_path / 'new_dir'
    assert main.main(_predict('--out', f'{folder}/')(tmp_path)) == 0
    assert [p.name for p in folder.iterdir()] == ['img_result.png']
    capsys.readouterr()
    (tmp_path / 'taken').write_bytes(b'mine')  # a file named as the folder: refused
    status, err = _status_and_error(_predict('--out', f'{tmp_path / "taken"}/')(tmp_path),
                                    capsys)
    assert status == 2
    _assert_one_line(err, '--out', 'taken', 'existing file')
    assert (tmp_path / 'taken').read_bytes() == b'mine'


def _small_cnn_file(tmp_path):
    """A model_final.npz of a small_cnn (2 classes, 8 x 8 input), as a trainer writes it."""
    import numpy

    from cvzoo.models import zoo
    from cvzoo.models.weights.trained_model import save_trained_model

    path = tmp_path / 'model_final.npz'
    model = zoo.get_model('small_cnn', n_class=2, insize=8)
    model(numpy.zeros((1, 3, 8, 8), numpy.float32))  # its first layer is sized by a call
    model.label_names = ('a', 'b')
    save_trained_model(model, str(path), 'small_cnn', n_class=2, insize=8)
    return path


def test_trained_file_of_another_model_is_one_line(real_registry, tmp_path, capsys):
    path = _small_cnn_file(tmp_path)
    status, err = _status_and_error(['predict', str(tmp_path / 'img.png'), '--model',
                                     'ssd_tiny', '--pretrained-model', str(path)], capsys)
    assert status == 2
    _assert_one_line(err, 'cvzoo predict: error:', str(path), "'small_cnn'", "'ssd_tiny'")


def _with_config(tmp_path, text):
    """A small_cnn model_final.npz whose __cvzoo_model__ entry holds ``text``."""
    import numpy

    from cvzoo.models.weights.trained_model import MODEL_CONFIG_KEY

    path = _small_cnn_file(tmp_path)
    with numpy.load(path) as archive:
        arrays = dict(archive)
    arrays[MODEL_CONFIG_KEY] = numpy.frombuffer(text, numpy.uint8)
    with open(path, 'wb') as file:
        numpy.savez(file, **arrays)
    return path


# case: the damaged __cvzoo_model__ text, what the line names
DAMAGED_CONFIGS = {
    'not_json': (b'{"name": "small_cnn", ', 'not a readable JSON text'),
    'not_utf8': (b'\xff\xfe{}', 'not a readable JSON text'),
    'a_list': (b'["small_cnn"]', '"name"'),
    'name_a_number': (b'{"name": 7, "kwargs": {}}', '"name"'),
    'kwargs_a_list': (b'{"name": "small_cnn", "kwargs": [2]}', '"kwargs"'),
    'label_names_a_string': (b'{"name": "small_cnn", "kwargs": {}, "label_names": "ab"}',
                             '"label_names"'),
    'unknown_argument': (b'{"name": "small_cnn", "kwargs": {"n_class": 2, "colour": 1}}',
                         "['colour']"),
}


@pytest.mark.parametrize('case', list(DAMAGED_CONFIGS))
def test_trained_file_with_a_damaged_config_is_one_line(real_registry, tmp_path, capsys,
                                                       case):
    text, named = DAMAGED_CONFIGS[case]
    path = _with_config(tmp_path, text)
    status, err = _status_and_error(['predict', str(tmp_path / 'img.png'), '--model',
                                     'small_cnn', '--pretrained-model', str(path)], capsys)
    assert status == 2
    _assert_one_line(err, 'cvzoo predict: error:', str(path), '__cvzoo_model__', named)


def test_damaged_config_loaded_into_a_model_names_the_file(tmp_path):
    """The same file given to a model's constructor (weights only): CorruptFileError."""
    from cvzoo.models import zoo

    path = _with_config(tmp_path, b'not json')
    with pytest.raises(errors.CorruptFileError, match='__cvzoo_model__') as info:
        zoo.get_model_class('small_cnn')(n_class=2, insize=8, pretrained_model=str(path))
    assert str(path) in str(info.value)


@pytest.fixture
def onnx_export(real_registry, tmp_path):
    """small_cnn with a weight file, for `cvzoo export`."""
    pytest.importorskip('onnx')
    return ['export', 'small_cnn', '--pretrained-model', str(_small_cnn_file(tmp_path))]


# opset from the newest the installed onnx package knows
OPSETS = {'99': lambda newest: 99, 'before_13': lambda newest: 12,
          'after_the_newest': lambda newest: newest + 1}


@pytest.mark.parametrize('case', list(OPSETS))
def test_export_opset_the_exporter_cannot_write_is_one_line(onnx_export, no_loading, tmp_path,
                                                           capsys, case):
    import onnx

    newest = onnx.defs.onnx_opset_version()
    opset = OPSETS[case](newest)
    out = tmp_path / 'm.onnx'
    status, err = _status_and_error(onnx_export + ['--out', str(out), '--opset', str(opset)],
                                    capsys)
    assert status == 2
    _assert_one_line(err, 'cvzoo export: error: --opset', f'from 13 to {newest}',
                     f'got {opset}')
    assert not out.exists()


def test_export_newest_opset_of_the_onnx_package_is_written(onnx_export, tmp_path, capsys):
    import onnx

    out = tmp_path / 'm.onnx'
    newest = str(onnx.defs.onnx_opset_version())
    assert main.main(onnx_export + ['--out', str(out), '--opset', newest]) == 0
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)


def test_export_out_in_a_missing_folder_is_one_line(onnx_export, no_loading, tmp_path, capsys):
    out = tmp_path / 'missing_dir' / 'm.onnx'
    status, err = _status_and_error(onnx_export + ['--out', str(out)], capsys)
    assert status == 2
    _assert_one_line(err, 'cvzoo export: error: argument --out', 'missing_dir')
    assert not out.parent.exists()


def test_download_all_to_an_existing_file_is_one_line(tmp_path, capsys):
    taken = tmp_path / 'mirror'
    taken.write_bytes(b'mine')
    status, err = _status_and_error(['download', '--all', '--to', str(taken)], capsys)
    assert status == 2
    _assert_one_line(err, 'cvzoo download: error: argument --to', 'expected a folder',
                     str(taken))
    assert taken.read_bytes() == b'mine'


@pytest.mark.parametrize('value', ['abc', 'inf', '-1', 'nan', '0'])
def test_bad_download_deadline_is_one_line_naming_the_variable(monkeypatch, tmp_path, capsys,
                                                               value):
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    monkeypatch.setenv('CVZOO_DOWNLOAD_DEADLINE', value)

    def no_network(*args, **kwargs):
        raise AssertionError('a request was sent')

    monkeypatch.setattr('requests.get', no_network)
    status, err = _status_and_error(['download', 'resnet50', 'imagenet'], capsys)
    assert status == 2
    _assert_one_line(err, 'cvzoo download: error: CVZOO_DOWNLOAD_DEADLINE', repr(value))
    assert not list((tmp_path / 'home').rglob('*.part'))


def test_train_stopped_by_a_non_finite_loss_is_one_line_with_status_1(tmp_path, capsys,
                                                                     monkeypatch):
    """`cvzoo train` whose loss turns NaN ends with one line naming the loss and saying
    that model_final.npz was not written; status 1 (the run failed, the user did not)."""
    from tests.helpers import train_runs

    data = train_runs.class_folders(tmp_path / 'data')
    train_runs.poison_at(monkeypatch, 2)
    out = tmp_path / 'out'
    status = main.main(['train', 'small_cnn', '--data', str(data), '--iterations', '3',
                        '--batchsize', '4', '--insize', '8', '--out', str(out)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert lines[-1].startswith('cvzoo train: error: ') and 'main/loss' in lines[-1]
    assert lines[-1].endswith('model_final.npz was not written')
    assert 'Traceback' not in '\n'.join(lines)
    assert not (out / 'model_final.npz').exists()
