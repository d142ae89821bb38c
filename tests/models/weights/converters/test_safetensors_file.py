""".safetensors weight files: written, sniffed, loaded with no pickle, corrupt ones named."""

import builtins
import pickle

import numpy
import pytest

from cvzoo import errors
from cvzoo.core.links import link
from cvzoo.models import zoo
from cvzoo.models.weights.converters import file_format, safetensors_file
from tests.helpers import toy_models
from tests.helpers.scripts import load_script

pytest.importorskip('safetensors')



_Affine = toy_models.Affine


class _Toy(link.Chain):
    def __init__(self, pretrained_model=None):
        super().__init__()
        with self.init_scope():
            self.conv = _Affine(4, 2)
            self.fc = _Affine(2, 3)
        if pretrained_model:
            zoo.load_weights(self, pretrained_model)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))


def _random_toy(rng):
    model = _Toy()
    for param in model.params():
        param.array[...] = rng.standard_normal(param.shape)
    return model


def _assert_same(model, reference):
    for (name, mine), (_, theirs) in zip(sorted(model.namedparams()),
                                         sorted(reference.namedparams())):
        numpy.testing.assert_array_equal(mine.array, theirs.array, err_msg=name)


def test_round_trip(tmp_path, rng):
    source = _random_toy(rng)
    path = tmp_path / 'toy.safetensors'
    safetensors_file.save_safetensors(path, source)
    assert file_format.sniff_format(path) == 'safetensors'
    assert sorted(file_format.read_weight_file(path)) == ['conv/W', 'conv/b', 'fc/W', 'fc/b']
    model = _Toy(pretrained_model=path)
    _assert_same(model, source)
    assert not list((tmp_path / 'home').rglob('*.cvzoo.npz'))  # read as it is, no cache


def test_loading_needs_no_pickle(tmp_path, rng, monkeypatch):
    source = _random_toy(rng)
    path = tmp_path / 'toy.safetensors'
    safetensors_file.save_safetensors(path, source)

    def refuse(*args, **kwargs):
        raise AssertionError('pickle was used')

    monkeypatch.setattr(pickle, 'Unpickler', refuse)
    monkeypatch.setattr(pickle, 'loads', refuse)
    monkeypatch.setattr(pickle, 'load', refuse)
    _assert_same(_Toy(pretrained_model=str(path)), source)


@pytest.mark.parametrize('damage', ['truncated', 'header'], ids=['truncated', 'header'])
def test_corrupt_file_names_the_file(tmp_path, rng, damage):
    path = tmp_path / 'bad.safetensors'
    safetensors_file.save_safetensors(path, _random_toy(rng))
    data = path.read_bytes()
    if damage == 'truncated':
        path.write_bytes(data[:-20])
    else:
        path.write_bytes(data[:8] + b'{"x' + data[11:])
    with pytest.raises(errors.CorruptFileError, match='bad.safetensors'):
        _Toy(pretrained_model=path)


def test_missing_package_names_the_extra(tmp_path, rng, monkeypatch):
    path = tmp_path / 'toy.safetensors'
    safetensors_file.save_safetensors(path, _random_toy(rng))
    real_import = builtins.__import__

    def no_safetensors(name, *args, **kwargs):
        if name.startswith('safetensors'):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, '__import__', no_safetensors)
    assert file_format.sniff_format(path) == 'safetensors'  # sniffing needs no package
    for call in (lambda: _Toy(pretrained_model=path),
                 lambda: safetensors_file.save_safetensors(tmp_path / 'x.safetensors', _Toy())):
        with pytest.raises(errors.UsageError, match=r"cvzoo\[safetensors\]"):
            call()


def test_other_formats_are_not_taken_for_safetensors(tmp_path):
    assert not safetensors_file.looks_like_safetensors(b'\x10' + b'\0' * 7 + b'{', 8)
    assert not safetensors_file.looks_like_safetensors(b'\x01\0\0\0\0\0\0\0{}', 10)
    darknet = numpy.array([0, 2, 0], numpy.int32).tobytes() + b'\0' * 8 + b'\0' * 40
    (tmp_path / 'd.weights').write_bytes(darknet)
    assert file_format.sniff_format(tmp_path / 'd.weights') == 'darknet_weights'


def test_convert_weights_script_writes_safetensors(tmp_path, rng, capsys):
    script = load_script('convert_weights')
    from cvzoo.models.classification.squeezenet import squeezenet

    source = squeezenet.SqueezeNet1_1()
    for param in source.params():
        param.array[...] = rng.standard_normal(param.shape).astype(param.dtype)
    from cvzoo.core.serializers import npz

    npz.save_npz(tmp_path / 'mine.npz', source)
    out = tmp_path / 'mine.safetensors'
    assert script.main([str(tmp_path / 'mine.npz'), str(out), '--model', 'squeezenet1_1']) == 0
    assert 'wrote' in capsys.readouterr().out
    assert file_format.sniff_format(out) == 'safetensors'
    _assert_same(squeezenet.SqueezeNet1_1(pretrained_model=str(out)), source)
