import hashlib
import io
import multiprocessing
import os
import tarfile
import zipfile

import pytest

from cvzoo import errors
from cvzoo.utils import download as download_module
from cvzoo.utils.download import cached_download, download, extract_archive

DATA = bytes(range(256)) * 4000  # about 1 MB, several chunks
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch):
    monkeypatch.setattr(download_module, '_RETRY_PAUSE', 0.01)


@pytest.fixture
def home(monkeypatch, tmp_path):
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    return tmp_path / 'home'


def test_download_with_hash(http_server, tmp_path):
    (http_server.root / 'w.npz').write_bytes(DATA)
    path = download(http_server.url_for('w.npz'), tmp_path / 'out' / 'w.npz', SHA, quiet=True)
    assert path.read_bytes() == DATA
    assert sorted(p.name for p in path.parent.iterdir()) == ['w.npz']


def test_wrong_hash_is_refused_and_nothing_is_left(http_server, tmp_path):
    (http_server.root / 'w.npz').write_bytes(DATA)
    url = http_server.url_for('w.npz')
    with pytest.raises(errors.DownloadError) as info:
        download(url, tmp_path / 'w.npz', '0' * 64, quiet=True)
    message = str(info.value)
    assert url in message and '0' * 64 in message and SHA in message
    assert not any(p.name.startswith('w.npz') for p in tmp_path.iterdir())


@pytest.mark.parametrize('drops', [1, 2], ids=['one-drop', 'two-drops'])
def test_dropped_connection_is_resumed(http_server, tmp_path, drops):
    (http_server.root / 'w.npz').write_bytes(DATA)
    http_server.drop_after('w.npz', 300_000, times=drops)
    path = download(http_server.url_for('w.npz'), tmp_path / 'w.npz', SHA, quiet=True)
    assert path.read_bytes() == DATA
    assert http_server.count('w.npz') == drops + 1


def test_gives_up_after_retries(http_server, tmp_path):
    (http_server.root / 'w.npz').write_bytes(DATA)
    http_server.drop_after('w.npz', 10, times=10)
    with pytest.raises(errors.DownloadError, match='w.npz'):
        download(http_server.url_for('w.npz'), tmp_path / 'w.npz', SHA, retries=2, quiet=True)
    assert http_server.count('w.npz') == 3
    assert not (tmp_path / 'w.npz').exists()


def test_server_error_is_retried_and_404_is_not(http_server, tmp_path):
    (http_server.root / 'w.npz').write_bytes(DATA)
    http_server.fail('w.npz', 503, times=1)
    download(http_server.url_for('w.npz'), tmp_path / 'w.npz', SHA, quiet=True)
    assert http_server.count('w.npz') == 2
    with pytest.raises(errors.DownloadError, match='404'):
        download(http_server.url_for('missing.npz'), tmp_path / 'm.npz', quiet=True)
    assert http_server.count('missing.npz') == 1


def test_local_path_and_file_url(tmp_path):
    source = tmp_path / 'src.bin'
    source.write_bytes(DATA)
    assert download(str(source), tmp_path / 'a.bin', SHA).read_bytes() == DATA
    assert download(source.as_uri(), tmp_path / 'b.bin', SHA).read_bytes() == DATA
    with pytest.raises(errors.DownloadError, match='nothing.bin'):
        download(str(tmp_path / 'nothing.bin'), tmp_path / 'c.bin')


def test_cached_download_fetches_once(http_server, home):
    (http_server.root / 'w.npz').write_bytes(DATA)
    url = http_server.url_for('w.npz')
    first = cached_download(url, SHA, subdir='models', quiet=True)
    second = cached_download(url, SHA, subdir='models', quiet=True)
    assert first == second == home / 'models' / 'w.npz'
    assert http_server.count('w.npz') == 1


def test_cached_file_with_wrong_hash_is_replaced(http_server, home):
    (http_server.root / 'w.npz').write_bytes(DATA)
    (home).mkdir(parents=True)
    (home / 'w.npz').write_bytes(b'stale')
    assert cached_download(http_server.url_for('w.npz'), SHA, quiet=True).read_bytes() == DATA


def test_mirror_folder_is_tried_first(http_server, home, tmp_path, monkeypatch):
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    (mirror / 'renamed.npz').write_bytes(DATA)
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    path = cached_download(http_server.url_for('w.npz'), SHA, file_name='renamed.npz')
    assert path.read_bytes() == DATA
    assert http_server.count('w.npz') == 0


def test_mirror_url_is_tried_first_then_origin(http_server, home, monkeypatch):
    (http_server.root / 'mirror').mkdir()
    (http_server.root / 'mirror' / 'w.npz').write_bytes(DATA)
    (http_server.root / 'w.npz').write_bytes(DATA)
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', http_server.url + '/mirror/')
    cached_download(http_server.url_for('w.npz'), SHA, quiet=True)
    assert http_server.count('mirror/w.npz') == 1 and http_server.count('w.npz') == 0
    (http_server.root / 'other.npz').write_bytes(DATA)
    cached_download(http_server.url_for('other.npz'), SHA, quiet=True)
    assert http_server.count('mirror/other.npz') == 1 and http_server.count('other.npz') == 1


def test_mirror_file_is_copied_not_linked(home, tmp_path, monkeypatch):
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    (mirror / 'w.npz').write_bytes(DATA)
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    path = cached_download('http://127.0.0.1:9/w.npz', SHA, quiet=True)
    assert path.read_bytes() == DATA
    assert os.stat(mirror / 'w.npz').st_nlink == 1 and os.stat(path).st_nlink == 1


def _interrupt_hash_check(monkeypatch):
    """Make the next sha256 check raise KeyboardInterrupt, as a Ctrl-C would."""
    real = download_module.sha256_of
    calls = []

    def sha256_of(path):
        calls.append(path)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(path)
    monkeypatch.setattr(download_module, 'sha256_of', sha256_of)


MIRROR_CONTENTS = {
    'shorter': DATA[:1000],      # the server resumes the range (206) and appends
    'same_size': b'x' * len(DATA),  # the server refuses the range (416): restart
    'longer': DATA + b'extra',
}


@pytest.mark.parametrize('case', list(MIRROR_CONTENTS))
def test_interrupted_mirror_copy_never_changes_the_mirror(http_server, home, tmp_path,
                                                           monkeypatch, case):
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    (mirror / 'w.npz').write_bytes(MIRROR_CONTENTS[case])
    (http_server.root / 'w.npz').write_bytes(DATA)
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    _interrupt_hash_check(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        cached_download(http_server.url_for('w.npz'), SHA, quiet=True)
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR')
    path = cached_download(http_server.url_for('w.npz'), SHA, quiet=True)
    assert path.read_bytes() == DATA
    assert (mirror / 'w.npz').read_bytes() == MIRROR_CONTENTS[case]


@pytest.mark.parametrize('link', ['hard', 'symbolic'])
def test_linked_part_file_is_discarded_not_resumed(http_server, home, tmp_path, link):
    """A .part linked to a user's file (left by an older cvzoo or planted) is not written."""
    user_file = tmp_path / 'user.bin'
    user_file.write_bytes(DATA[:5000])
    home.mkdir(parents=True)
    part = home / 'w.npz.part'
    (os.link if link == 'hard' else os.symlink)(user_file, part)
    (http_server.root / 'w.npz').write_bytes(DATA)
    path = cached_download(http_server.url_for('w.npz'), SHA, quiet=True)
    assert path.read_bytes() == DATA and os.stat(path).st_nlink == 1
    assert user_file.read_bytes() == DATA[:5000]


def test_offline_error_names_url_and_path(home):
    url = 'http://127.0.0.1:9/weights/w.npz'  # the discard port: nothing listens
    with pytest.raises(errors.DownloadError) as info:
        cached_download(url, SHA, subdir='models', quiet=True)
    assert url in str(info.value)
    assert str(home / 'models' / 'w.npz') in str(info.value)


def _fetch_in_process(url, home):
    os.environ['CVZOO_HOME'] = str(home)
    cached_download(url, SHA, quiet=True)


def test_concurrent_processes_download_once(http_server, home):
    (http_server.root / 'w.npz').write_bytes(DATA)
    processes = [multiprocessing.Process(target=_fetch_in_process,
                                         args=(http_server.url_for('w.npz'), home))
                 for _ in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(30)
        assert process.exitcode == 0
    assert http_server.count('w.npz') == 1


def _tar_with(tmp_path, name, add):
    path = tmp_path / name
    with tarfile.open(path, 'w:gz') as archive:
        add(archive)
    return path


def _add_file(archive, name, data=b'x'):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def _add_link(archive, name, target):
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    archive.addfile(info)


def test_extract_zip_and_tar(tmp_path):
    with zipfile.ZipFile(tmp_path / 'a.zip', 'w') as archive:
        archive.writestr('dir/a.txt', 'hello')
    assert (extract_archive(tmp_path / 'a.zip', tmp_path / 'z') / 'dir' / 'a.txt').read_text() \
        == 'hello'
    tar = _tar_with(tmp_path, 'a.tar.gz', lambda a: (_add_file(a, 'd/b.txt', b'hi'),
                                                    _add_link(a, 'd/link', 'b.txt')))
    out = extract_archive(tar, tmp_path / 't')
    assert (out / 'd' / 'b.txt').read_bytes() == b'hi'
    assert (out / 'd' / 'link').read_bytes() == b'hi'


@pytest.mark.parametrize('entry', ['../evil.txt', '/tmp/evil.txt', 'a/../../evil.txt'],
                         ids=['dotdot', 'absolute', 'nested-dotdot'])
def test_extract_refuses_traversal(tmp_path, entry):
    with zipfile.ZipFile(tmp_path / 'bad.zip', 'w') as archive:
        archive.writestr(entry, 'x')
    with pytest.raises(errors.CorruptFileError, match='evil.txt'):
        extract_archive(tmp_path / 'bad.zip', tmp_path / 'out')
    tar = _tar_with(tmp_path, 'bad.tar.gz', lambda a: _add_file(a, entry))
    with pytest.raises(errors.CorruptFileError, match='evil.txt'):
        extract_archive(tar, tmp_path / 'out2')
    assert not (tmp_path / 'evil.txt').exists()


@pytest.mark.parametrize('target', ['../../outside', '/etc/passwd'], ids=['relative', 'absolute'])
def test_extract_refuses_links_outside(tmp_path, target):
    tar = _tar_with(tmp_path, 'link.tar', lambda a: _add_link(a, 'd/escape', target))
    with pytest.raises(errors.CorruptFileError, match='escape'):
        extract_archive(tar, tmp_path / 'out')


def test_extract_non_archive_is_named(tmp_path):
    (tmp_path / 'junk.tar').write_bytes(b'not an archive at all')
    with pytest.raises(errors.CorruptFileError, match='junk.tar'):
        extract_archive(tmp_path / 'junk.tar', tmp_path / 'out')


@pytest.mark.parametrize('name', ['w.npz', 'no-length/w.npz'])
def test_trickling_server_hits_the_deadline_and_releases_the_lock(trickle_server, home,
                                                                  monkeypatch, name):
    import time

    from cvzoo.utils.file_lock import FileLock

    monkeypatch.setenv('CVZOO_DOWNLOAD_DEADLINE', '1.0')
    url = f'{trickle_server}/{name}'
    start = time.monotonic()
    with pytest.raises(errors.DownloadError, match='deadline of 1 s') as info:
        cached_download(url, SHA, quiet=True)
    assert time.monotonic() - start < 5  # the read timeout (30 s) never fired
    assert url in str(info.value) and str(home / 'w.npz') in str(info.value)
    with FileLock(home / 'w.npz.lock', timeout=1):
        pass
    assert not (home / 'w.npz').exists()


def test_deadline_argument_and_bad_environment(trickle_server, tmp_path, monkeypatch):
    with pytest.raises(errors.DownloadError, match='deadline of 0.5 s'):
        download(f'{trickle_server}/w.npz', tmp_path / 'w.npz', deadline=0.5, quiet=True)
    monkeypatch.setenv('CVZOO_DOWNLOAD_DEADLINE', 'soon')
    with pytest.raises(ValueError, match='CVZOO_DOWNLOAD_DEADLINE'):
        download(f'{trickle_server}/w.npz', tmp_path / 'w.npz', quiet=True)


def test_mirrors_are_tried_in_order_after_the_origin(http_server, home, tmp_path, monkeypatch):
    """A dead origin (404, then a port nothing listens on) gives way to the next URL,
    checked against the same sha256; the env mirror still comes first."""
    (http_server.root / 'w.npz').write_bytes(DATA)
    (http_server.root / 'other.npz').write_bytes(b'not the file')
    http_server.fail('w.npz', status=404)
    mirrors = ['http://127.0.0.1:9/w.npz', http_server.url_for('other.npz'),
               http_server.url_for('w.npz')]
    path = cached_download(http_server.url_for('w.npz'), SHA, quiet=True, mirrors=mirrors)
    assert path.read_bytes() == DATA
    assert http_server.count('w.npz') == 2 and http_server.count('other.npz') == 1
    path.unlink()
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    (mirror / 'w.npz').write_bytes(DATA)
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    assert cached_download('http://127.0.0.1:9/w.npz', SHA, quiet=True,
                           mirrors=[http_server.url_for('w.npz')]).read_bytes() == DATA
    assert http_server.count('w.npz') == 2  # served by the folder


def test_every_url_failing_names_each(http_server, home):
    http_server.fail('w.npz', status=404)
    with pytest.raises(errors.DownloadError) as info:
        cached_download(http_server.url_for('w.npz'), SHA, quiet=True,
                        mirrors=['http://127.0.0.1:9/w.npz'])
    message = str(info.value)
    assert 'HTTP status 404' in message and '127.0.0.1:9/w.npz' in message
    assert 'CVZOO_WEIGHTS_MIRROR' in message


@pytest.mark.parametrize('deadline', [float('inf'), float('nan'), 0, -1.0])
def test_deadline_argument_that_is_no_deadline_is_refused(tmp_path, monkeypatch, deadline):
    """An infinite deadline would stop the watchdog's timer thread at its start (and so
    end no trickle); it is refused before any request, as the environment variable is."""
    def no_network(*args, **kwargs):
        raise AssertionError('a request was sent')

    monkeypatch.setattr(download_module.requests, 'get', no_network)
    with pytest.raises(errors.UsageError, match='deadline: expected a finite number'):
        download('http://127.0.0.1:9/w.npz', tmp_path / 'w.npz', deadline=deadline, quiet=True)
    assert not list(tmp_path.glob('w.npz*'))
