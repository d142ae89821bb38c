"""Downloads that go wrong, served from 127.0.0.1: each ends in the right class naming the
URL (or the file), retries what can be retried, and leaves nothing but the kept .part."""

import hashlib

import pytest

from cvzoo import errors
from cvzoo.utils import download as download_module
from cvzoo.utils.download import cached_download, download

DATA = bytes(range(256)) * 400
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture(autouse=True)
def _fast_retries_and_own_home(monkeypatch, tmp_path):
    monkeypatch.setattr(download_module, '_RETRY_PAUSE', 0.01)
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)


def _not_found(server):
    return server.url_for('absent.npz'), {}


def _forbidden(server):
    server.fail('w.npz', 403, times=5)
    return server.url_for('w.npz'), {}


def _server_errors_past_the_retries(server):
    server.fail('w.npz', 500, times=10)
    return server.url_for('w.npz'), {'retries': 2}


def _wrong_sha256(server):
    return server.url_for('w.npz'), {'sha256': 'ab' * 32}


def _truncated_every_time(server):
    server.drop_after('w.npz', 1000, times=10)
    return server.url_for('w.npz'), {'retries': 1}


def _missing_local_file(server):
    return str(server.root / 'nowhere.npz'), {}


def _refused_port(server):
    return 'http://127.0.0.1:9/w.npz', {'retries': 0}


# case: (set the server up -> (url, download kwargs), the text the message holds)
FAILURES = {
    '404': (_not_found, '404'),
    '403': (_forbidden, '403'),
    '500_past_the_retries': (_server_errors_past_the_retries, 'w.npz'),
    'wrong_sha256': (_wrong_sha256, 'sha256 mismatch'),
    'truncated_transfer': (_truncated_every_time, 'w.npz'),
    'missing_local_file': (_missing_local_file, 'nowhere.npz'),
    'connection_refused': (_refused_port, '127.0.0.1:9'),
}


@pytest.mark.parametrize('case', list(FAILURES), ids=list(FAILURES))
def test_failed_download_names_the_url_and_leaves_no_file(http_server, tmp_path, case):
    setup, text = FAILURES[case]
    (http_server.root / 'w.npz').write_bytes(DATA)
    url, kwargs = setup(http_server)
    out = tmp_path / 'out'
    with pytest.raises(errors.DownloadError) as info:
        download(url, out / 'w.npz', quiet=True, **kwargs)
    assert type(info.value) is errors.DownloadError
    assert url in str(info.value) and text in str(info.value)
    assert not (out / 'w.npz').exists()


def test_500_then_success_is_retried(http_server, tmp_path):
    (http_server.root / 'w.npz').write_bytes(DATA)
    http_server.fail('w.npz', 500, times=2)
    path = download(http_server.url_for('w.npz'), tmp_path / 'w.npz', SHA, quiet=True)
    assert path.read_bytes() == DATA and http_server.count('w.npz') == 3


def test_trickling_server_ends_at_a_short_deadline(trickle_server, tmp_path):
    url = f'{trickle_server}/w.npz'
    with pytest.raises(errors.DownloadError, match='deadline of 0.5 s') as info:
        download(url, tmp_path / 'w.npz', deadline=0.5, quiet=True)
    assert url in str(info.value) and 'w.npz.part' in str(info.value)


def test_mirror_folder_without_the_file_falls_back_then_names_both(http_server, tmp_path,
                                                                   monkeypatch):
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    url = http_server.url_for('gone.npz')
    with pytest.raises(errors.DownloadError) as info:
        cached_download(url, SHA, quiet=True)
    message = str(info.value)
    assert str(mirror / 'gone.npz') in message and url in message
    assert str(tmp_path / 'home' / 'gone.npz') in message  # where to put it by hand
    assert sorted(p.name for p in mirror.iterdir()) == []


def test_bad_arguments_are_named(http_server):
    with pytest.raises(ValueError, match='file_name'):
        cached_download(http_server.url + '/', quiet=True)
