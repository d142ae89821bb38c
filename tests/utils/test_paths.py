import pathlib

from cvzoo.utils import paths


def test_defaults_follow_home(monkeypatch, tmp_path):
    monkeypatch.delenv('CVZOO_HOME', raising=False)
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    monkeypatch.delenv('CVZOO_DATASET_ROOT', raising=False)
    monkeypatch.setenv('HOME', str(tmp_path))
    assert paths.cvzoo_home() == tmp_path / '.cache' / 'cvzoo'
    assert paths.weights_mirror() is None
    assert paths.dataset_root() == tmp_path / '.cache' / 'cvzoo' / 'datasets'


def test_environment_is_read_on_every_call(monkeypatch, tmp_path):
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    assert paths.cvzoo_home() == tmp_path / 'home'
    assert paths.dataset_root() == tmp_path / 'home' / 'datasets'
    monkeypatch.setenv('CVZOO_DATASET_ROOT', str(tmp_path / 'data'))
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', 'http://127.0.0.1:1/mirror')
    assert paths.dataset_root() == pathlib.Path(tmp_path / 'data')
    assert paths.weights_mirror() == 'http://127.0.0.1:1/mirror'
