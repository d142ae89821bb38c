"""cvzoo.export.onnxruntime_network: the onnxruntime sessions behind predict(runtime=...).

A session is built once per input shape and kept on the model, rebuilt when the weights
change or move, left out of copies, written nowhere on disk; its outputs come back in
the nesting and on the device of the model's forward; missing packages and networks
that cannot be exported give a UsageError saying so.
"""

import copy
import os
import sys

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend, config, variable
from cvzoo.export import UnsupportedFunctionError, onnxruntime_network

pytest.importorskip('onnxruntime')
pytest.importorskip('onnx')


class _TwoHeads(L.Chain):
    """A forward returning nested outputs and an array computed outside the graph."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(3, 4, 3, pad=1)
            self.fc = L.Linear(None, 2)

    def forward(self, x):
        h = F.relu(self.conv(x))
        return h, [self.fc(h), self.xp.arange(3)]


class _Untranslatable(L.Chain):
    def forward(self, x):
        return F.huber_loss(x, x * 0, 1.0, reduce='no')


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


def _run(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return onnxruntime_network.run(model, x)


def _sessions(model):
    return model.__dict__[onnxruntime_network.CACHE_ATTRIBUTE].entries


def _batch(shape=(2, 3, 8, 8), seed=0):
    return numpy.random.RandomState(seed).standard_normal(shape).astype(numpy.float32)


def test_outputs_keep_the_forwards_nesting():
    model = _TwoHeads()
    x = _batch()
    got, want = _run(model, x), _forward(model, x)
    assert isinstance(got, tuple) and isinstance(got[1], list)
    assert isinstance(got[0], variable.Variable) and isinstance(got[1][0], variable.Variable)
    numpy.testing.assert_allclose(got[0].array, want[0].array, atol=1e-5)
    numpy.testing.assert_allclose(got[1][0].array, want[1][0].array, atol=1e-5)
    numpy.testing.assert_array_equal(got[1][1], numpy.arange(3))


def test_one_session_per_input_shape_reused_across_batch_sizes():
    model = L.Convolution2D(3, 4, 3)
    _run(model, _batch((2, 3, 8, 8)))
    session = _sessions(model)[((3, 8, 8), '<f4')].session
    y = _run(model, _batch((5, 3, 8, 8), seed=1))
    assert y.shape == (5, 4, 6, 6)
    assert _sessions(model)[((3, 8, 8), '<f4')].session is session
    _run(model, _batch((1, 3, 10, 12)))
    assert sorted(_sessions(model)) == [((3, 8, 8), '<f4'), ((3, 10, 12), '<f4')]


@pytest.mark.parametrize('change', ['in_place', 'replaced', 'persistent'])
def test_sessions_are_rebuilt_when_the_weights_change(change):
    model = L.Sequential(L.Convolution2D(3, 4, 3), L.BatchNormalization(4))
    x = _batch()
    _run(model, x)
    session = _sessions(model)[((3, 8, 8), '<f4')].session
    if change == 'in_place':
        model[0].W.array *= 2  # as an optimizer step does
    elif change == 'replaced':
        model[0].W.array = model[0].W.array + 1  # as a weight load does
    else:
        model[1].avg_mean = model[1].avg_mean + 0.5
    got = _run(model, x)
    assert _sessions(model)[((3, 8, 8), '<f4')].session is not session
    numpy.testing.assert_allclose(got.array, _forward(model, x).array, atol=1e-4)


def test_unchanged_weights_give_the_same_fingerprint_and_a_change_another():
    model = L.Linear(3, 2)
    before = onnxruntime_network.weights_fingerprint(model)
    assert onnxruntime_network.weights_fingerprint(model) == before
    model.b.array[0] += 1
    assert onnxruntime_network.weights_fingerprint(model) != before


def test_copies_of_a_model_get_sessions_of_their_own():
    model = _TwoHeads()
    _run(model, _batch())
    for other in (copy.deepcopy(model), model.copy(mode='copy')):
        other.fc.W.array = other.fc.W.array * 2
        numpy.testing.assert_allclose(_run(other, _batch())[0].array,
                                      _forward(model, _batch())[0].array, atol=1e-5)
        numpy.testing.assert_allclose(_run(other, _batch())[1][0].array,
                                      _forward(other, _batch())[1][0].array, atol=1e-5)
        assert len(_sessions(other)) == len(_sessions(model)) == 1
        assert _sessions(other) is not _sessions(model)


def test_no_file_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _run(_TwoHeads(), _batch())
    assert os.listdir(tmp_path) == []
    assert os.listdir(os.environ['CVZOO_HOME']) == []


def test_model_on_a_gpu_gets_its_outputs_on_its_device(stand_in):
    model = _TwoHeads()
    x = _batch()
    want = _forward(model, x)[1][0].array
    _run(model, x)
    model.to_device('cuda:1')
    got = _run(model, backend.to_device(x, 'cuda:1'))
    assert backend.get_device_from_array(got[1][0].array) == backend.get_device('cuda:1')
    assert len(_sessions(model)) == 1  # the move dropped the CPU model's session
    numpy.testing.assert_allclose(backend.to_numpy(got[1][0].array), want, atol=1e-5)


@pytest.mark.parametrize('package', ['onnxruntime', 'onnx'])
def test_missing_package_is_named(package, monkeypatch):
    monkeypatch.setitem(sys.modules, package, None)
    with pytest.raises(errors.UsageError, match=f"runtime='onnxruntime'.*{package}"):
        _run(L.Linear(3, 2), numpy.ones((1, 3), numpy.float32))


def test_untranslatable_network_names_its_function():
    with pytest.raises(errors.UsageError, match='HuberLoss') as info:
        _run(_Untranslatable(), _batch())
    assert isinstance(info.value.__cause__, UnsupportedFunctionError)
    assert '_Untranslatable' in str(info.value)
