"""``cvzoo export``: a weight file in, an ONNX file out that onnxruntime runs like cvzoo."""

import numpy
import pytest

from cvzoo.cli import main as cli_main
from cvzoo.cli.export import example_input
from cvzoo.core import config, serializers
from cvzoo.models import get_model, get_model_class

ort = pytest.importorskip('onnxruntime')
pytest.importorskip('onnx')


def test_export_writes_a_file_onnxruntime_runs(tmp_path, capsys):
    numpy.random.seed(0)
    weights = str(tmp_path / 'squeezenet.npz')
    serializers.save_npz(weights, get_model_class('squeezenet1_1')(n_class=1000))
    out = str(tmp_path / 'squeezenet.onnx')
    status = cli_main.main(['export', 'squeezenet1_1', '--pretrained-model', weights,
                            '--format', 'onnx', '--out', out])
    assert status == 0
    assert capsys.readouterr().out.strip() == out
    model = get_model('squeezenet1_1', pretrained_model=weights)
    x = numpy.concatenate([example_input(model, (300, 200))] * 2) * 0.5
    session = ort.InferenceSession(out, providers=['CPUExecutionProvider'])
    got, = session.run(None, {'input': x})
    with config.using_config('train', False), config.no_backprop_mode():
        want = model(x).array
    assert got.shape == (2, 1000)
    numpy.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_export_of_an_unknown_model_is_a_user_error(tmp_path, capsys):
    status = cli_main.main(['export', 'no_such_model', '--pretrained-model', 'imagenet',
                            '--out', str(tmp_path / 'x.onnx')])
    assert status == 2
    assert 'no_such_model' in capsys.readouterr().err
    assert not (tmp_path / 'x.onnx').exists()
