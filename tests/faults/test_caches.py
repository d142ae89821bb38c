"""The cache under faults: a read-only $CVZOO_HOME or mirror (another user's), a lock held
by a stopped process, a $CVZOO_HOME that is no folder, the umask of what cvzoo writes, and
the temporary files a killed snapshot leaves.

Read-only cases run as root too (as CI does): tests.helpers.read_only drops root's
CAP_DAC_OVERRIDE for the block, so the kernel refuses every write as it would another
user's.
"""

import hashlib
import logging
import os
import signal
import subprocess
import sys
import types

import numpy
import pytest

from cvzoo import errors
from cvzoo.core.links import link
from cvzoo.core.serializers import atomic_write, npz
from cvzoo.core.variable import Parameter
from cvzoo.core.training.extensions import snapshots as snapshot_module
from cvzoo.models import discovery, registry, zoo
from cvzoo.models.weights import conversion_cache
from cvzoo.utils import download, image, paths
from tests.helpers import pth_writer, toy_models, train_runs
from tests.helpers.read_only import read_only

DATA = bytes(range(256)) * 64
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture
def home(tmp_path, monkeypatch):
    folder = tmp_path / 'home'
    monkeypatch.setenv('CVZOO_HOME', str(folder))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    return folder


@pytest.fixture
def source(tmp_path):
    """A local file (DATA) to fetch, as a file:// URL."""
    path = tmp_path / 'origin' / 'w.bin'
    path.parent.mkdir()
    path.write_bytes(DATA)
    return path.as_uri()


def _listing(root):
    """{path: (mode, size, mtime)} of everything below ``root``, the root included."""
    found = {}
    for folder, dirs, names in os.walk(root):
        for path in [folder] + [os.path.join(folder, name) for name in dirs + names]:
            info = os.lstat(path)
            found[path] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


# --- a read-only cache or mirror ------------------------------------------------------

def test_read_only_home_serves_a_verified_file_without_writing(home, source):
    cached = download.cached_download(source, SHA, subdir='weights', quiet=True)
    assert (home / 'weights' / 'w.bin.lock').exists()  # the lock of the first fetch
    before = _listing(home)
    with read_only(home):
        assert download.cached_download(source, SHA, subdir='weights') == cached
        assert download.cached_download(source, None, subdir='weights') == cached
    assert _listing(home) == before


def _stale_copy(home):
    (home / 'weights').mkdir(parents=True)
    (home / 'weights' / 'w.bin').write_bytes(b'an older file')


def _stale_copy_after_a_fetch(home):
    """The lock file of an earlier fetch is there: it is locked read-only, and the check
    that the folder can take the download names the folder."""
    origin = home.parent / 'older.bin'
    origin.write_bytes(b'an older file')
    download.cached_download(origin.as_uri(), None, file_name='w.bin', subdir='weights')
    assert (home / 'weights' / 'w.bin.lock').exists()


# case: (what the read-only home holds, the folder the message names)
READ_ONLY_HOMES = {
    'empty_home': (lambda home: home.mkdir(), 'home'),
    'stale_copy': (_stale_copy, 'weights'),
    'stale_copy_after_a_fetch': (_stale_copy_after_a_fetch, 'weights'),
}


@pytest.mark.parametrize('case', list(READ_ONLY_HOMES), ids=list(READ_ONLY_HOMES))
def test_read_only_home_that_must_fetch_names_the_folder(home, source, case):
    prepare, folder = READ_ONLY_HOMES[case]
    prepare(home)
    before = _listing(home)
    with read_only(home), pytest.raises(errors.DownloadError) as info:
        download.cached_download(source, SHA, subdir='weights', quiet=True)
    message = str(info.value)
    assert 'cannot write there' in message and 'CVZOO_HOME' in message
    assert str(home if folder == 'home' else home / 'weights') in message
    assert str(home / 'weights' / 'w.bin') in message
    assert _listing(home) == before


def test_read_only_mirror_is_read_not_written(home, tmp_path, monkeypatch):
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    (mirror / 'w.bin').write_bytes(DATA)
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    before = _listing(mirror)
    with read_only(mirror):
        path = download.cached_download('http://127.0.0.1:9/w.bin', SHA, subdir='weights',
                                        quiet=True)
    assert path == home / 'weights' / 'w.bin' and path.read_bytes() == DATA
    assert _listing(mirror) == before


class _PthToy(toy_models.OneParameterModel):
    """A registered toy whose key 'torch' is a PyTorch file: loading it converts it."""


@pytest.fixture
def torch_toy(home, tmp_path, monkeypatch):
    """'cache_toy' with key 'torch' (a .pth of W = [1, 2, 3], fetched from a file URL)."""
    pth = tmp_path / 'origin' / 'toy.pth'
    pth.parent.mkdir(exist_ok=True)
    pth_writer.write_state_dict(pth, {'W': numpy.array([1, 2, 3], numpy.float32)})
    entry = zoo.Weights(
        url=pth.as_uri(), sha256=hashlib.sha256(pth.read_bytes()).hexdigest(),
        source_format='torch_pth', n_class=3, label_names=('a', 'b', 'c'),
        preset=zoo.Preset(size=8, mean=(0.0, 0.0, 0.0)),
        reported=zoo.Score('top1', 0.5, 'imagenet_val', 'a test'))
    discovery.import_all_models()
    monkeypatch.setattr(registry, '_REGISTRY', {})
    zoo.register('cache_toy', task='classification')(_PthToy)
    monkeypatch.setattr(_PthToy, 'weights', {'torch': entry})
    return home


def test_converted_cache_of_another_user_is_used_without_writing(torch_toy, monkeypatch):
    """A read-only cache holding the download and its conversion (another user's) is
    used as it is: nothing is converted again and nothing is written."""
    first = zoo.get_model('cache_toy', pretrained_model='torch')
    cache = torch_toy / 'weights' / ('toy.pth' + conversion_cache.CONVERTED_SUFFIX)
    assert cache.exists()

    def no_conversion(*args):
        raise AssertionError('converted again')

    monkeypatch.setattr(conversion_cache, '_convert', no_conversion)
    before = _listing(torch_toy)
    with read_only(torch_toy):
        second = zoo.get_model('cache_toy', pretrained_model='torch')
    numpy.testing.assert_array_equal(second.W.array, first.W.array)
    numpy.testing.assert_array_equal(second.W.array, [1, 2, 3])
    assert _listing(torch_toy) == before


def test_read_only_home_with_a_file_that_fails_its_record_names_it(home, tmp_path,
                                                                    monkeypatch):
    """A cached file of an UNPUBLISHED source that differs from its trust record must be
    deleted and fetched again: in a read-only cache that is a DownloadError naming it."""
    origin = tmp_path / 'origin' / 'toy.npz'
    origin.parent.mkdir()
    with open(origin, 'wb') as file:
        numpy.savez(file, W=numpy.array([1, 2, 3], numpy.float32))
    entry = zoo.Weights(
        url=origin.as_uri(), sha256=zoo.UNPUBLISHED, source_format='cvzoo_npz', n_class=3,
        label_names=('a', 'b', 'c'), preset=zoo.Preset(size=8, mean=(0.0, 0.0, 0.0)),
        reported=zoo.Score('top1', 0.5, 'imagenet_val', 'a test'))
    discovery.import_all_models()
    monkeypatch.setattr(registry, '_REGISTRY', {})
    zoo.register('cache_toy', task='classification')(_PthToy)
    monkeypatch.setattr(_PthToy, 'weights', {'npz': entry})
    zoo.get_model('cache_toy', pretrained_model='npz')  # records the trust
    (home / 'weights' / 'toy.npz.sha256').write_text('0' * 64 + '\n')
    before = _listing(home)
    with read_only(home), pytest.raises(errors.DownloadError) as info:
        zoo.get_model('cache_toy', pretrained_model='npz')
    message = str(info.value)
    assert str(home / 'weights' / 'toy.npz') in message and 'CVZOO_HOME' in message
    assert 'cannot be deleted' in message
    assert _listing(home) == before


# --- a lock held by a stopped process -------------------------------------------------

_HOLD_LOCK = '''
import os, signal, sys
from cvzoo.utils.file_lock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print('locked', flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
'''


@pytest.fixture
def stopped_holder(home):
    """A process that holds ``$CVZOO_HOME/weights/w.bin.lock`` and is stopped (SIGSTOP)."""
    lock = home / 'weights' / 'w.bin.lock'
    process = subprocess.Popen([sys.executable, '-c', _HOLD_LOCK, str(lock)],
                               stdout=subprocess.PIPE, text=True,
                               env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)})
    try:
        assert process.stdout.readline().strip() == 'locked'
        yield process, lock
    finally:
        process.send_signal(signal.SIGCONT)
        process.kill()
        process.wait()
        process.stdout.close()


def test_waiting_for_a_stopped_holder_says_so_once_then_gives_up(stopped_holder, source,
                                                                 monkeypatch, caplog):
    process, lock = stopped_holder
    monkeypatch.setenv('CVZOO_DOWNLOAD_DEADLINE', '0.6')
    with caplog.at_level(logging.WARNING), pytest.raises(errors.DownloadError) as info:
        download.cached_download(source, SHA, subdir='weights', quiet=True)
    message = str(info.value)
    assert str(lock) in message and f'process {process.pid}' in message
    assert 'CVZOO_DOWNLOAD_DEADLINE' in message
    waiting = [r.getMessage() for r in caplog.records if 'waiting for the lock' in r.getMessage()]
    assert len(waiting) == 1
    assert str(lock) in waiting[0] and f'process {process.pid}' in waiting[0]
    assert not (lock.parent / 'w.bin').exists()


def test_waiting_for_a_dataset_lock_gives_up_too(home, monkeypatch, tmp_path):
    from cvzoo.datasets import download_archive

    lock = home / download_archive.ARCHIVE_SUBDIR / 'voc.tar.extract.lock'
    process = subprocess.Popen([sys.executable, '-c', _HOLD_LOCK, str(lock)],
                               stdout=subprocess.PIPE, text=True,
                               env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)})
    try:
        assert process.stdout.readline().strip() == 'locked'
        monkeypatch.setenv('CVZOO_DOWNLOAD_DEADLINE', '0.3')
        with pytest.raises(errors.DownloadError, match=f'process {process.pid}'):
            download_archive.download_archive('http://127.0.0.1:9/voc.tar', tmp_path / 'voc',
                                              tmp_path / 'voc' / 'VOC2007')
    finally:
        process.send_signal(signal.SIGCONT)
        process.kill()
        process.wait()
        process.stdout.close()


# --- a $CVZOO_HOME that is no folder --------------------------------------------------

def _regular_file(path):
    path.write_text('not a folder')


def _dangling_link(path):
    os.symlink(path.parent / 'gone', path)


@pytest.mark.parametrize('make', [_regular_file, _dangling_link],
                         ids=['regular_file', 'dangling_symlink'])
def test_home_that_is_no_folder_is_named(tmp_path, monkeypatch, source, make):
    path = tmp_path / 'home'
    make(path)
    monkeypatch.setenv('CVZOO_HOME', str(path))
    with pytest.raises(errors.UsageError, match='CVZOO_HOME') as info:
        download.cached_download(source, SHA, subdir='weights', quiet=True)
    assert str(path) in str(info.value)
    with pytest.raises(errors.UsageError, match='CVZOO_HOME'):
        zoo.get_model('resnet50', pretrained_model='imagenet')
    assert os.path.lexists(path) and not os.path.isdir(path)


# --- the umask of what cvzoo writes ---------------------------------------------------

class _Two(link.Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(numpy.ones((2, 3), numpy.float32))


def _write_npz(tmp_path):
    npz.save_npz(tmp_path / 'model_final.npz', _Two())
    return [tmp_path / 'model_final.npz']


def _write_snapshot(tmp_path):
    trainer = types.SimpleNamespace(out=str(tmp_path), updater=types.SimpleNamespace(iteration=3))
    snapshot_module.snapshot(target=_Two())(trainer)
    return [tmp_path / 'snapshot_iter_3']


def _write_picture(tmp_path):
    image.write_image(numpy.zeros((3, 4, 5), numpy.float32), tmp_path / 'a.png')
    return [tmp_path / 'a.png']


def _write_download(tmp_path):
    origin = tmp_path / 'origin.bin'
    origin.write_bytes(DATA)
    return [download.cached_download(origin.as_uri(), SHA, subdir='weights', quiet=True)]


def _write_converted_cache(tmp_path):
    pth = tmp_path / 'w.pth'
    pth_writer.write_state_dict(pth, {'W': numpy.array([1, 2, 3], numpy.float32)})
    toy_models.OneParameterModel(pretrained_model=str(pth))
    return list((tmp_path / 'home' / 'converted').iterdir())


def _write_safetensors(tmp_path):
    pytest.importorskip('safetensors')
    from cvzoo.models.weights.converters import safetensors_file

    safetensors_file.save_safetensors(tmp_path / 'w.safetensors', _Two())
    return [tmp_path / 'w.safetensors']


def _train_run(tmp_path):
    out = tmp_path / 'out'
    train_runs.load_train_script('classifier').main(
        train_runs.train_args('classifier', tmp_path, out, 1))
    return [path for path in out.rglob('*') if path.is_file()]


WRITERS = {'npz': _write_npz, 'snapshot': _write_snapshot, 'picture': _write_picture,
           'download': _write_download, 'converted_cache': _write_converted_cache,
           'safetensors': _write_safetensors, 'train_run': _train_run}


@pytest.fixture(params=[0o022, 0o027], ids=['umask_022', 'umask_027'])
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


@pytest.mark.parametrize('case', list(WRITERS), ids=list(WRITERS))
def test_written_files_honour_the_umask(home, tmp_path, umask, case):
    written = WRITERS[case](tmp_path)
    assert written
    for path in written:
        assert oct(os.stat(path).st_mode & 0o777) == oct(0o666 & ~umask), path


# --- temporary files of a killed snapshot ---------------------------------------------

def _killed_snapshot(out, iteration):
    """Run a snapshot in a child that dies (as by SIGKILL) while the file is written;
    return the files it left in ``out``."""
    trainer = types.SimpleNamespace(out=str(out),
                                    updater=types.SimpleNamespace(iteration=iteration))
    pid = os.fork()
    if pid == 0:  # the child: dies inside numpy's write, skipping every cleanup
        try:
            numpy.savez_compressed = lambda *args, **kwargs: os._exit(0)
            snapshot_module.snapshot(target=_Two())(trainer)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return sorted(path.name for path in out.iterdir())


def test_a_killed_snapshot_leaves_only_what_the_next_start_removes(tmp_path):
    out = tmp_path / 'out'
    out.mkdir()
    left = _killed_snapshot(out, 4)
    assert len(left) == 1 and left[0].startswith('.snapshot_iter_4.'), left
    assert '.tmp.' not in left[0]  # no temporary name of a temporary name
    removed = atomic_write.remove_orphans(out, 'snapshot_iter_*')
    assert [os.path.basename(path) for path in removed] == left
    assert list(out.iterdir()) == []


def test_trainer_start_removes_nested_tmp_files_of_older_runs(tmp_path):
    out = tmp_path / 'out'
    out.mkdir()
    nested = out / '..snapshot_iter_3.k2j4x.tmp.a8z0q.tmp'  # what nested writes left
    nested.write_bytes(b'half a snapshot')
    other = out / '..notes.tmp'  # not a snapshot's: stays
    other.write_text('mine')
    train_runs.load_train_script('classifier').main(
        train_runs.train_args('classifier', tmp_path, out, 1))
    assert not nested.exists() and other.read_text() == 'mine'


def test_nested_atomic_writes_make_one_temporary_name(tmp_path):
    seen = []
    with atomic_write.atomic_write(tmp_path / 'a.npz') as outer:
        with atomic_write.atomic_write(outer) as inner:
            seen.append(sorted(p.name for p in tmp_path.iterdir()))
            assert inner == outer
            (tmp_path / inner).write_bytes(b'x')
    assert seen == [[os.path.basename(outer)]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ['a.npz']


def test_paths_module_reports_the_bad_home(tmp_path, monkeypatch):
    (tmp_path / 'file').write_text('x')
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'file'))
    with pytest.raises(errors.UsageError, match='which is a file'):
        paths.cvzoo_home()
