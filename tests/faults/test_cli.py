"""The command line under bad arguments: argparse errors exit 2 naming the option; user
errors (cvzoo's error classes) exit 2 with one line naming the argument or file. The fake
models are those of tests.helpers.fake_cli_models."""

import pytest

from cvzoo.cli import main
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
