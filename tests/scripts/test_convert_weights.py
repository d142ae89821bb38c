"""scripts/convert_weights.py: a user's torchvision .pth becomes a cvzoo .npz that loads."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.classification.squeezenet import squeezenet
from tests.helpers import pth_writer, torch_squeezenet
from tests.helpers.scripts import load_script

script = load_script('convert_weights')


def test_torchvision_file_to_cvzoo_npz(tmp_path, capsys):
    state = torch_squeezenet.squeezenet_state(numpy.random.default_rng(0), '1_1')
    pth_writer.write_state_dict(tmp_path / 'mine.pth', state)
    assert script.main([str(tmp_path / 'mine.pth'), str(tmp_path / 'mine.npz'),
                        '--model', 'squeezenet1_1', '--source', 'torchvision']) == 0
    assert 'wrote' in capsys.readouterr().out
    model = squeezenet.SqueezeNet1_1(pretrained_model=str(tmp_path / 'mine.npz'))
    numpy.testing.assert_array_equal(model.conv10.W.array, state['classifier.1.weight'])


def test_other_class_count(tmp_path):
    state = torch_squeezenet.squeezenet_state(numpy.random.default_rng(1), '1_1')
    state['classifier.1.weight'] = state['classifier.1.weight'][:7]
    state['classifier.1.bias'] = state['classifier.1.bias'][:7]
    pth_writer.write_state_dict(tmp_path / 'seven.pth', state)
    with pytest.raises(errors.WeightLoadError, match='classifier|conv10'):
        script.main([str(tmp_path / 'seven.pth'), str(tmp_path / 'x.npz'),
                     '--model', 'squeezenet1_1', '--source', 'torchvision'])
    assert not (tmp_path / 'x.npz').exists()
    script.main([str(tmp_path / 'seven.pth'), str(tmp_path / 'seven.npz'),
                 '--model', 'squeezenet1_1', '--source', 'torchvision', '--n-class', '7'])
    assert squeezenet.SqueezeNet1_1(n_class=7, pretrained_model=str(tmp_path / 'seven.npz'))


def test_unknown_model_is_named(tmp_path):
    (tmp_path / 'a.pth').write_bytes(b'')  # src must exist: its argument type checks it
    with pytest.raises(ValueError, match="no model 'squeezenet9'"):
        script.main([str(tmp_path / 'a.pth'), str(tmp_path / 'b.npz'), '--model', 'squeezenet9'])
