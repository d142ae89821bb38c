"""scripts/convert_weights.py: a user's torchvision .pth becomes a cvzoo .npz that loads."""

import importlib.util
import pathlib

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.classification.squeezenet import squeezenet

ROOT = pathlib.Path(__file__).resolve().parents[2]
_CLASSIFICATION = ROOT / 'tests' / 'models' / 'classification'


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


torch_squeezenet = _load('cvzoo_tests_convert_torch_squeezenet',
                         _CLASSIFICATION / 'squeezenet' / 'torch_squeezenet.py')
weight_files = _load('cvzoo_tests_convert_weight_files',
                     _CLASSIFICATION / 'resnet' / 'weight_files.py')
script = _load('cvzoo_scripts_convert_weights', ROOT / 'scripts' / 'convert_weights.py')


def test_torchvision_file_to_cvzoo_npz(tmp_path, capsys):
    state = torch_squeezenet.squeezenet_state(numpy.random.default_rng(0), '1_1')
    weight_files.write_pth(tmp_path / 'mine.pth', state)
    assert script.main([str(tmp_path / 'mine.pth'), str(tmp_path / 'mine.npz'),
                        '--model', 'squeezenet1_1', '--source', 'torchvision']) == 0
    assert 'wrote' in capsys.readouterr().out
    model = squeezenet.SqueezeNet1_1(pretrained_model=str(tmp_path / 'mine.npz'))
    numpy.testing.assert_array_equal(model.conv10.W.array, state['classifier.1.weight'])


def test_other_class_count(tmp_path):
    state = torch_squeezenet.squeezenet_state(numpy.random.default_rng(1), '1_1')
    state['classifier.1.weight'] = state['classifier.1.weight'][:7]
    state['classifier.1.bias'] = state['classifier.1.bias'][:7]
    weight_files.write_pth(tmp_path / 'seven.pth', state)
    with pytest.raises(errors.WeightLoadError, match='classifier|conv10'):
        script.main([str(tmp_path / 'seven.pth'), str(tmp_path / 'x.npz'),
                     '--model', 'squeezenet1_1', '--source', 'torchvision'])
    assert not (tmp_path / 'x.npz').exists()
    script.main([str(tmp_path / 'seven.pth'), str(tmp_path / 'seven.npz'),
                 '--model', 'squeezenet1_1', '--source', 'torchvision', '--n-class', '7'])
    assert squeezenet.SqueezeNet1_1(n_class=7, pretrained_model=str(tmp_path / 'seven.npz'))


def test_unknown_model_is_named(tmp_path):
    with pytest.raises(ValueError, match="no model 'squeezenet9'"):
        script.main([str(tmp_path / 'a.pth'), str(tmp_path / 'b.npz'), '--model', 'squeezenet9'])
