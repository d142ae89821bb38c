"""`cvzoo download`: --format safetensors, and --all --to DIR served back as a mirror."""

import dataclasses
import hashlib
import json
import os
import pathlib
import socket
import typing

import numpy
import pytest

from cvzoo.cli import main
from cvzoo.models import discovery, registry, zoo
from cvzoo.models.weights.converters import file_format
from tests.helpers import toy_models


class _Toy(toy_models.OneParameterModel):
    weights: typing.ClassVar[dict] = {}


def _dead_url(name):
    """An http URL on 127.0.0.1 at a port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    return f'http://127.0.0.1:{port}/{name}'


def _sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


@pytest.fixture
def served_toy(http_server, monkeypatch, tmp_path):
    """'dl_toy' (key 'voc': toy.npz + toy.cfg) whose origin URLs are dead; the files are
    served by the local server, listed second as mirrors."""
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    with open(http_server.root / 'toy.npz', 'wb') as file:
        numpy.savez(file, W=numpy.array([1.0, 2.0, 3.0], numpy.float32))
    (http_server.root / 'toy.cfg').write_text('[net]\n')
    cfg = zoo.WeightFile(_dead_url('toy.cfg'), _sha256(http_server.root / 'toy.cfg'),
                         mirrors=(http_server.url_for('toy.cfg'),))
    entry = zoo.Weights(
        url=_dead_url('toy.npz'), mirrors=(http_server.url_for('toy.npz'),),
        sha256=_sha256(http_server.root / 'toy.npz'), source_format='cvzoo_npz', n_class=3,
        label_names=('a', 'b', 'c'), preset=zoo.Preset(size=8, mean=(0.0, 0.0, 0.0)),
        reported=zoo.Score('top1', 0.5, 'imagenet_val', 'a test'), files=(cfg,))
    discovery.import_all_models()
    monkeypatch.setattr(registry, '_REGISTRY', {})
    zoo.register('dl_toy', task='classification')(_Toy)
    monkeypatch.setattr(_Toy, 'weights', {'voc': entry})
    return http_server, entry


def test_format_safetensors_writes_beside_the_download(served_toy, capsys, tmp_path):
    pytest.importorskip('safetensors')
    assert main.main(['download', 'dl_toy', 'voc', '--format', 'safetensors']) == 0
    path = pathlib.Path(capsys.readouterr().out.strip())
    assert path == tmp_path / 'home' / 'weights' / 'toy.npz.cvzoo.safetensors'
    assert file_format.sniff_format(path) == 'safetensors'
    numpy.testing.assert_array_equal(_Toy(pretrained_model=path).W.array, [1.0, 2.0, 3.0])


def test_format_safetensors_of_the_shipped_model_goes_to_the_home(monkeypatch, tmp_path,
                                                                  capsys):
    """The file shipped inside the package is converted into $CVZOO_HOME, never beside
    it, and the written file (its batch norms' scalar counts included) loads back."""
    pytest.importorskip('safetensors')
    from cvzoo.models.weights import embedded

    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    package_files = sorted(os.listdir(embedded.EMBEDDED_DIR))
    model_name, key = embedded.SHIPPED_WEIGHTS
    assert main.main(['download', model_name, key, '--format', 'safetensors']) == 0
    path = pathlib.Path(capsys.readouterr().out.strip())
    assert path.parent == tmp_path / 'home' / 'weights'
    assert sorted(os.listdir(embedded.EMBEDDED_DIR)) == package_files
    loaded = zoo.get_model(model_name, pretrained_model=str(path))
    shipped = zoo.get_model(model_name, pretrained_model=key)
    for (name, mine), (_, theirs) in zip(sorted(loaded.namedparams()),
                                         sorted(shipped.namedparams())):
        numpy.testing.assert_array_equal(mine.array, theirs.array, err_msg=name)


def test_download_needs_model_and_key(capsys):
    assert main.main(['download', 'resnet50']) == 2
    assert 'MODEL KEY' in capsys.readouterr().err


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch):
    from cvzoo.utils import download

    monkeypatch.setattr(download, '_RETRY_PAUSE', 0.001)


def test_dead_origin_falls_back_to_the_entry_mirror(served_toy, capsys, tmp_path):
    http_server, _ = served_toy
    assert main.main(['download', 'dl_toy', 'voc']) == 0
    out = capsys.readouterr().out.split()
    assert out == [str(tmp_path / 'home' / 'weights' / name) for name in ('toy.npz', 'toy.cfg')]
    assert http_server.count('toy.npz') == 1


def test_all_to_folder_then_served_as_the_mirror_offline(served_toy, capsys, tmp_path,
                                                         monkeypatch):
    http_server, entry = served_toy
    folder = tmp_path / 'mirror'
    assert main.main(['download', '--all', '--to', str(folder)]) == 0
    assert 'manifest.json' in capsys.readouterr().out
    manifest = json.loads((folder / 'manifest.json').read_text())
    origins = {f.file_name: f.url for f in entry.all_files}
    assert [r['name'] for r in manifest['files']] == ['toy.cfg', 'toy.npz']
    for record in manifest['files']:
        served = http_server.root / record['name']
        assert record['sha256'] == _sha256(served) == _sha256(folder / record['name'])
        assert record['size'] == served.stat().st_size
        assert record['url'] == origins[record['name']]
        assert record['weights'] == ['dl_toy/voc']

    # The air-gapped machine: a fresh cache, every URL of the entry dead, only the folder.
    offline = dataclasses.replace(
        entry, mirrors=(), files=tuple(dataclasses.replace(f, mirrors=()) for f in entry.files))
    monkeypatch.setattr(_Toy, 'weights', {'voc': offline})
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'offline_home'))
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(folder))
    numpy.testing.assert_array_equal(_Toy(pretrained_model='voc').W.array, [1.0, 2.0, 3.0])
    cfg = tmp_path / 'offline_home' / 'weights' / 'toy.cfg'
    assert zoo.fetch_weights(offline)[1] == str(cfg) and cfg.read_text() == '[net]\n'
    assert http_server.count('toy.npz') == 1  # the offline load did not touch the server


def test_all_keeps_going_and_reports_a_dead_file(served_toy, capsys, tmp_path, monkeypatch):
    http_server, entry = served_toy
    broken = dataclasses.replace(entry, files=(dataclasses.replace(
        entry.files[0], mirrors=(_dead_url('toy.cfg'),)),))
    monkeypatch.setattr(_Toy, 'weights', {'voc': broken})
    folder = tmp_path / 'mirror'
    assert main.main(['download', '--all', '--model', 'dl_toy', '--to', str(folder)]) == 1
    captured = capsys.readouterr()
    assert 'failed: dl_toy/voc' in captured.err and 'toy.cfg' in captured.err
    assert (folder / 'toy.npz').exists() and not (folder / 'toy.cfg').exists()
    names = [r['name'] for r in json.loads((folder / 'manifest.json').read_text())['files']]
    assert names == ['toy.npz']


@pytest.mark.parametrize('argv, message', [
    (['download', '--all'], '--all --to DIR'),
    (['download', '--to', 'x'], '--all --to DIR'),
    (['download', '--all', '--to', 'x', 'dl_toy', 'voc'], 'no MODEL KEY'),
    (['download', '--all', '--to', 'x', '--model', 'nope'], "no model 'nope'"),
], ids=['no_to', 'no_all', 'model_key', 'unknown_model'])
def test_all_argument_errors(served_toy, capsys, argv, message):
    assert main.main(argv) == 2
    assert message in capsys.readouterr().err
