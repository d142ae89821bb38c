"""Tests of the zoo: weight-entry schema, registry, fetching, converting and loading."""

import dataclasses
import hashlib
import logging
import pathlib
import pickle
import shutil
import typing

import numpy
import pytest

from cvzoo import errors
from cvzoo.core.links import link
from cvzoo.core.serializers import npz as npz_serializer
from cvzoo.models import discovery, zoo
from cvzoo.models import registry as registry_module
from cvzoo.models.weights import conversion_cache, weight_files
from cvzoo.models.weights.converters import file_format
from tests.helpers import pth_writer, toy_models

SHA = 'ab' * 32
PRESET = zoo.Preset(size=224, mean=(123.0, 117.0, 104.0))
SCORE = zoo.Score('top1', 0.7613, 'imagenet_val', 'torchvision docs')


def _weights(**changes):
    fields = {'url': 'https://example.org/models/toy-1234.pth', 'sha256': SHA,
                  'source_format': 'torch_pth', 'n_class': 3, 'label_names': ('a', 'b', 'c'),
                  'preset': PRESET, 'reported': SCORE}
    fields.update(changes)
    return zoo.Weights(**fields)


def test_weight_file_name_defaults_to_url():
    assert zoo.WeightFile('https://h/x/y.weights?raw=true', SHA).file_name == 'y.weights'
    assert zoo.WeightFile('https://h/x/y.weights', SHA, 'z.weights').file_name == 'z.weights'
    entry = _weights(files=(zoo.WeightFile('https://h/net.cfg', SHA),))
    assert [f.file_name for f in entry.all_files] == ['toy-1234.pth', 'net.cfg']
    assert entry.main_file.url == entry.url
    mirrored = _weights(mirrors=('https://mirror.org/toy-1234.pth',))
    assert mirrored.main_file.urls == (mirrored.url, 'https://mirror.org/toy-1234.pth')
    assert zoo.schema_problems(mirrored) == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.url = 'https://other'


def test_valid_entry_has_no_problems():
    assert zoo.schema_problems(_weights()) == []
    cfg = zoo.WeightFile('https://h/net.cfg', 'cd' * 32)
    assert zoo.schema_problems(_weights(files=(cfg,), measured=SCORE)) == []


BROKEN = {
    'http_url': ({'url': 'http://example.org/x.pth'}, 'not https'),
    'short_sha': ({'sha256': 'abc'}, 'sha256'),
    'upper_sha': ({'sha256': 'AB' * 32}, 'sha256'),
    'format': ({'source_format': 'onnx'}, 'source_format'),
    'labels': ({'label_names': ('a',)}, 'label_names'),
    'n_class': ({'n_class': 0}, 'n_class'),
    'size': ({'preset': zoo.Preset(size=(0, 3), mean=(0.0,), std=(1.0,))}, 'preset.size'),
    'std': ({'preset': zoo.Preset(size=8, mean=(0.0, 0.0), std=(0.0, 1.0))}, 'preset.mean/std'),
    'interpolation': ({'preset': dataclasses.replace(PRESET, interpolation='magic')},
                      'interpolation'),
    'backend': ({'preset': dataclasses.replace(PRESET, resize_backend='gimp')},
                'resize_backend'),
    'crop': ({'preset': dataclasses.replace(PRESET, crop_fraction=1.5)}, 'crop_fraction'),
    'metric': ({'reported': dataclasses.replace(SCORE, metric='acc')}, 'reported.metric'),
    'percent': ({'reported': dataclasses.replace(SCORE, value=76.1)}, 'fraction'),
    'dataset': ({'reported': dataclasses.replace(SCORE, dataset='mnist')}, 'dataset'),
    'no_source': ({'reported': dataclasses.replace(SCORE, source=' ')}, 'source'),
    'measured': ({'measured': dataclasses.replace(SCORE, value=-1.0)}, 'measured.value'),
    'same_names': ({'files': (zoo.WeightFile('https://h/toy-1234.pth', SHA),)}, 'differ'),
    'http_mirror': ({'mirrors': ('http://mirror.org/toy-1234.pth',)}, 'not https'),
    'repeated_mirror': ({'mirrors': ('https://example.org/models/toy-1234.pth',)}, 'repeat'),
    'file_mirror': ({'files': (zoo.WeightFile('https://h/net.cfg', SHA,
                                              mirrors=('ftp://h/net.cfg',)),)}, 'not https'),
}


@pytest.mark.parametrize('case', list(BROKEN), ids=list(BROKEN))
def test_schema_finds_each_problem(case):
    changes, message = BROKEN[case]
    problems = zoo.schema_problems(_weights(**changes))
    assert len(problems) == 1 and message in problems[0], problems


_ENTRIES = list(zoo.iter_weights())


@pytest.mark.parametrize('entry', [weights for _, _, weights in _ENTRIES],
                         ids=[f'{name}-{key}' for name, key, _ in _ENTRIES])
def test_every_registered_entry_follows_the_schema(entry):
    assert zoo.schema_problems(entry) == []


def test_iter_weights_yields_every_key_of_every_model():
    expected = [(name, key) for name in zoo.list_models()
                for key in getattr(zoo.get_model_class(name), 'weights', {})]
    assert [(name, key) for name, key, _ in _ENTRIES] == expected
    assert all(zoo.get_model_class(name).weights[key] is entry for name, key, entry in _ENTRIES)
    detection = [item[:2] for item in zoo.iter_weights('detection')]
    assert detection and all(name in zoo.list_models('detection') for name, _ in detection)


_Affine = toy_models.Affine


class Toy(link.Chain):
    """A tiny two-layer model with a torch-style name mapping."""

    weights: typing.ClassVar[dict] = {}

    def __init__(self, pretrained_model=None, n_class=3):
        super().__init__()
        with self.init_scope():
            self.conv = _Affine(4, 2)
            self.fc = _Affine(2, n_class)
        if pretrained_model:
            zoo.load_weights(self, pretrained_model)

    def convert_weights(self, raw, source):
        assert source in ('torch', 'torchvision')
        names = {'weight': 'W', 'bias': 'b'}
        return {k.split('.')[0] + '/' + names[k.split('.')[1]]: v for k, v in raw.items()}


def _torch_state(rng, n_class=3):
    return {'conv.weight': rng.standard_normal((2, 4)).astype(numpy.float32),
            'conv.bias': rng.standard_normal(2).astype(numpy.float32),
            'fc.weight': rng.standard_normal((n_class, 2)).astype(numpy.float32),
            'fc.bias': rng.standard_normal(n_class).astype(numpy.float32)}


@pytest.fixture
def registry(monkeypatch):
    """An empty registry for this test only (no fake model stays registered)."""
    discovery.import_all_models()
    monkeypatch.setattr(registry_module, '_REGISTRY', {})
    return registry_module._REGISTRY


def test_register_list_info_get(registry):
    toy = zoo.register('toy', task='classification')(Toy)
    assert toy is Toy
    zoo.register('toy', task='classification')(Toy)  # registering again is harmless
    monkey_weights = {'imagenet': _weights()}
    Detector = type('Detector', (Toy,), {'weights': monkey_weights})
    zoo.register('toy_detector', task='detection')(Detector)
    assert zoo.list_models() == ['toy', 'toy_detector']
    assert zoo.list_models('detection') == ['toy_detector']
    assert zoo.list_models('instance_segmentation') == []
    info = zoo.model_info('toy_detector')
    assert info['task'] == 'detection' and info['class'].endswith('Detector')
    entry = info['weights']['imagenet']
    assert entry['source_format'] == 'torch_pth' and entry['reported']['value'] == 0.7613
    assert entry['preset']['size'] == 224 and entry['files'][0]['file_name'] == 'toy-1234.pth'
    model = zoo.get_model('toy', n_class=5)
    assert isinstance(model, Toy) and model.fc.W.shape == (5, 2)
    assert zoo.resolve_weights(Detector, 'imagenet') is monkey_weights['imagenet']


@pytest.mark.parametrize('call, message', [
    (lambda: zoo.register('ResNet', 'classification'), 'name: .*lowercase'),
    (lambda: zoo.register('toy', 'classify'), 'task: .*classification'),
    (lambda: zoo.list_models('segmentation'), 'task: '),
    (lambda: zoo.get_model('tyo'), "no model 'tyo'.*did you mean \\['toy'\\]"),
    (lambda: zoo.resolve_weights(Toy, 'voc'),
     r"no weights 'voc'.*no published weights: .*cvzoo train"),
], ids=['upper_name', 'bad_task', 'bad_task_filter', 'unknown_model', 'unknown_key'])
def test_registry_errors(registry, call, message):
    zoo.register('toy', task='classification')(Toy)
    with pytest.raises(ValueError, match=message):
        call()


def test_register_name_taken(registry):
    zoo.register('toy', task='classification')(Toy)
    with pytest.raises(ValueError, match='already registered'):
        zoo.register('toy', task='classification')(type('Other', (Toy,), {}))


def _reference(state):
    return {'conv/W': state['conv.weight'], 'conv/b': state['conv.bias'],
            'fc/W': state['fc.weight'], 'fc/b': state['fc.bias']}


def _assert_loaded(model, expected):
    for key, value in expected.items():
        name, param = key.split('/')
        numpy.testing.assert_array_equal(getattr(getattr(model, name), param).array, value)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))


def _converted(tmp_path, name):
    """The converted cache of a local file outside $CVZOO_HOME (which is tmp_path/home)."""
    found = list((tmp_path / 'home' / 'converted').glob(f'{name}.*.cvzoo.npz'))
    assert len(found) <= 1
    return found[0] if found else tmp_path / 'home' / 'converted' / f'{name}.missing'


def test_load_cvzoo_npz_without_conversion(tmp_path, rng):
    source = Toy()
    for param in source.params():
        param.array[...] = rng.standard_normal(param.shape)
    npz_serializer.save_npz(tmp_path / 'toy.npz', source)
    model = Toy()
    assert zoo.load_weights(model, tmp_path / 'toy.npz') is None
    for mine, theirs in zip(model.params(), source.params()):
        numpy.testing.assert_array_equal(mine.array, theirs.array)
    assert not (tmp_path / 'toy.npz.cvzoo.npz').exists()


def test_load_torch_converts_once_and_caches(tmp_path, rng, monkeypatch):
    state = _torch_state(rng)
    path = tmp_path / 'toy.pth'
    pth_writer.write_state_dict(path, state)
    reads = []
    real_read = file_format.read_weight_file
    monkeypatch.setattr(file_format, 'read_weight_file',
                        lambda *args: reads.append(args) or real_read(*args))
    model = Toy(pretrained_model=str(path))
    _assert_loaded(model, _reference(state))
    assert len(reads) == 1 and _converted(tmp_path, 'toy.pth').exists()
    assert not (tmp_path / 'toy.pth.cvzoo.npz').exists()  # never beside a user's file
    _assert_loaded(Toy(pretrained_model=path), _reference(state))
    assert len(reads) == 1  # the second load read the cache, not the .pth
    zoo.load_weights(Toy(), path, source='torchvision')
    assert len(reads) == 2  # another name mapping is another conversion

    new_state = _torch_state(rng)
    pth_writer.write_state_dict(path, new_state)  # same name, new content: the stamp differs
    _assert_loaded(Toy(pretrained_model=path), _reference(new_state))
    assert len(reads) == 3


def test_corrupt_cache_is_converted_again(tmp_path, rng, caplog):
    state = _torch_state(rng)
    path = tmp_path / 'toy.pth'
    pth_writer.write_state_dict(path, state)
    Toy(pretrained_model=path)
    cache = _converted(tmp_path, 'toy.pth')
    cache.write_bytes(cache.read_bytes()[:50])
    with caplog.at_level(logging.WARNING, logger=conversion_cache.__name__):
        _assert_loaded(Toy(pretrained_model=path), _reference(state))
    assert 'converting again' in caplog.text
    assert npz_serializer.read_npz(cache)['fc/W'].shape == (3, 2)


def test_local_file_outside_home_is_cached_in_cvzoo_home(tmp_path, rng):
    pth_writer.write_state_dict(tmp_path / 'toy.pth', _torch_state(rng))
    Toy(pretrained_model=tmp_path / 'toy.pth')
    assert len(list((tmp_path / 'home' / 'converted').glob('toy.pth.*.cvzoo.npz'))) == 1


def test_names_already_cvzoo_without_hook(tmp_path, rng):
    state = _reference(_torch_state(rng))
    pth_writer.write_state_dict(tmp_path / 'plain.pth', state)
    model = link.Chain()
    with model.init_scope():
        model.conv, model.fc = _Affine(4, 2), _Affine(2, 3)
    zoo.load_weights(model, tmp_path / 'plain.pth')
    _assert_loaded(model, state)


def test_mismatch_reports_every_key_at_once(tmp_path, rng):
    state = _torch_state(rng, n_class=5)
    state['extra.weight'] = numpy.zeros(1, numpy.float32)
    del state['conv.bias']
    pth_writer.write_state_dict(tmp_path / 'bad.pth', state)
    with pytest.raises(errors.WeightLoadError) as info:
        Toy(pretrained_model=tmp_path / 'bad.pth')
    message = str(info.value)
    for part in ('bad.pth', 'fc/W', 'fc/b', 'missing: conv/b', 'unexpected: extra/W'):
        assert part in message


def test_mismatched_conversion_is_not_cached(tmp_path, rng):
    pth_writer.write_state_dict(tmp_path / 'bad.pth', _torch_state(rng, n_class=5))
    with pytest.raises(errors.WeightLoadError):
        Toy(pretrained_model=tmp_path / 'bad.pth')
    assert not _converted(tmp_path, 'bad.pth').exists()


@pytest.mark.parametrize('layout', ['zip', 'legacy'])
def test_refused_file_leaves_later_loads_and_the_cache_right(tmp_path, rng, layout):
    evil = tmp_path / 'evil.pth'
    name_int32 = b'X\x04\x00\x00\x00nameX\x05\x00\x00\x00int32'
    data = b'\x80\x02ctorch\nFloatStorage\n}' + name_int32 + b'sb.'
    if layout == 'zip':
        pth_writer.write_zip(evil, None, data_pkl=data)
    else:
        headers = b''.join(pickle.dumps(h, protocol=2) for h in (
            0x1950A86A20F9469CFC6C, 1001, {'little_endian': True}))
        evil.write_bytes(headers + data + pickle.dumps([], protocol=2))
    with pytest.raises(errors.CorruptFileError, match='evil.pth'):
        Toy(pretrained_model=evil)
    assert not list((tmp_path / 'home').rglob('*.cvzoo.npz'))
    state = _torch_state(rng)
    pth_writer.write_state_dict(tmp_path / 'good.pth', state)
    _assert_loaded(Toy(pretrained_model=tmp_path / 'good.pth'), _reference(state))
    cached = npz_serializer.read_npz(_converted(tmp_path, 'good.pth'))
    for key, value in _reference(state).items():
        numpy.testing.assert_array_equal(cached[key], value)


def test_load_weights_argument_errors(tmp_path):
    with pytest.raises(TypeError, match='path_or_key'):
        zoo.load_weights(Toy(), 3)
    with pytest.raises(ValueError, match="no weights '.*missing.pth' and no file"):
        zoo.load_weights(Toy(), tmp_path / 'missing.pth')


def _fake_download(folder, fetched):
    def cached_download(url, sha256, file_name, mirrors=()):
        path = folder / file_name
        if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
            raise errors.DownloadError(f'{url}: sha256 mismatch')
        fetched.append(url)
        return str(path)
    return cached_download


def test_load_by_key_fetches_every_file(tmp_path, rng, monkeypatch):
    state = _torch_state(rng)
    pth_writer.write_state_dict(tmp_path / 'toy-1234.pth', state)
    (tmp_path / 'toy.cfg').write_text('[net]\n')
    digest = {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
              for name in ('toy-1234.pth', 'toy.cfg')}
    cfg = zoo.WeightFile('https://example.org/toy.cfg', digest['toy.cfg'])
    entry = _weights(sha256=digest['toy-1234.pth'], files=(cfg,), convert_from='torchvision')
    fetched = []
    monkeypatch.setattr(weight_files, '_cached_download', _fake_download(tmp_path, fetched))
    monkeypatch.setattr(Toy, 'weights', {'imagenet': entry})
    assert zoo.fetch_weights(entry) == [str(tmp_path / 'toy-1234.pth'), str(tmp_path / 'toy.cfg')]
    model = Toy()
    assert zoo.load_weights(model, 'imagenet') is entry
    _assert_loaded(model, _reference(state))
    bad = dataclasses.replace(entry, sha256='0' * 64)
    monkeypatch.setattr(Toy, 'weights', {'imagenet': bad})
    with pytest.raises(errors.DownloadError, match='toy-1234.pth: sha256'):
        Toy(pretrained_model='imagenet')


def test_fetch_through_the_weights_mirror(tmp_path, monkeypatch):
    pytest.importorskip('cvzoo.utils.download')
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    (mirror / 'toy.weights').write_bytes(b'\0' * 40)
    digest = hashlib.sha256(b'\0' * 40).hexdigest()
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    entry = _weights(url='https://127.0.0.1:9/not/there/orig.weights', sha256=digest,
                     file_name='toy.weights', source_format='darknet')
    local, = zoo.fetch_weights(entry)
    assert pathlib.Path(local).read_bytes() == b'\0' * 40


def test_real_weights_load_through_a_local_path(shared_data, tmp_path):
    shutil.copyfile(shared_data / 'weights' / 'squeezenet1_1_deepscale.pth', tmp_path / 's.pth')
    arrays, save = conversion_cache.converted_arrays(link.Chain(), str(tmp_path / 's.pth'),
                                                     'torch', 'x' * 64)
    assert arrays['features.0.weight'].shape == (64, 3, 3, 3)
    save()
    assert _converted(tmp_path, 's.pth').exists()


def _serve_toy(http_server, rng, monkeypatch, tmp_path):
    state = _torch_state(rng)
    pth_writer.write_state_dict(http_server.root / 'toy-1234.pth', state)
    digest = hashlib.sha256((http_server.root / 'toy-1234.pth').read_bytes()).hexdigest()
    entry = _weights(url=http_server.url_for('toy-1234.pth'), sha256=digest)
    monkeypatch.setattr(Toy, 'weights', {'imagenet': entry})
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    return state, tmp_path / 'home' / 'weights' / 'toy-1234.pth'


def test_download_once_and_refetch_a_corrupt_cache(http_server, rng, monkeypatch,
                                                   tmp_path):
    state, cached = _serve_toy(http_server, rng, monkeypatch, tmp_path)
    _assert_loaded(Toy(pretrained_model='imagenet'), _reference(state))
    _assert_loaded(Toy(pretrained_model='imagenet'), _reference(state))
    assert http_server.count('toy-1234.pth') == 1
    assert cached.with_name('toy-1234.pth.cvzoo.npz').exists()
    cached.write_bytes(cached.read_bytes()[:100])  # truncated in the cache
    _assert_loaded(Toy(pretrained_model='imagenet'), _reference(state))
    assert http_server.count('toy-1234.pth') == 2


def test_download_hash_mismatch_leaves_nothing(http_server, rng, monkeypatch,
                                               tmp_path):
    _, cached = _serve_toy(http_server, rng, monkeypatch, tmp_path)
    bad = dataclasses.replace(Toy.weights['imagenet'], sha256='0' * 64)
    monkeypatch.setattr(Toy, 'weights', {'imagenet': bad})
    with pytest.raises(errors.DownloadError) as info:
        Toy(pretrained_model='imagenet')
    assert bad.url in str(info.value) and str(cached) in str(info.value)
    assert not cached.exists() and not list(cached.parent.glob('*.part'))


def test_real_darknet_files_through_the_mirror(shared_data, tmp_path, monkeypatch):
    pytest.importorskip('cvzoo.utils.download')
    folder = shared_data / 'weights'
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(folder))
    files = [zoo.WeightFile(f'https://github.invalid/raw/{name}', hashlib.sha256(
        (folder / name).read_bytes()).hexdigest()) for name in ('yolo-fastest-voc.cfg',)]
    entry = _weights(
        url='https://github.invalid/raw/yolo-fastest.weights', source_format='darknet',
        sha256='f507b1e9f016e368299f72fe757572e6b4d14fc200d28d380c955c3d3137a6ff',
        file_name='yolo-fastest-voc.weights', files=tuple(files))
    assert zoo.schema_problems(entry) == []
    weights_path, cfg_path = zoo.fetch_weights(entry)
    assert file_format.sniff_format(weights_path) == 'darknet_weights'
    assert pathlib.Path(cfg_path).read_text().startswith(
        (folder / 'yolo-fastest-voc.cfg').read_text()[:20])


@pytest.mark.parametrize('sha256, ok', [
    ('0676ba61', True), (SHA[:20], True), (zoo.UNPUBLISHED, True), ('0676ba6', False),
    ('0676BA61', False), ('unknown', False),
], ids=['prefix8', 'prefix20', 'unpublished', 'prefix7', 'upper_prefix', 'other_word'])
def test_schema_sha256_forms(sha256, ok):
    assert (zoo.schema_problems(_weights(sha256=sha256)) == []) == ok


def _serve_with_hash(http_server, monkeypatch, tmp_path, sha256, content=b'weights' * 9):
    (http_server.root / 'toy-1234.pth').write_bytes(content)
    entry = _weights(url=http_server.url_for('toy-1234.pth'), sha256=sha256)
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    return entry, tmp_path / 'home' / 'weights' / 'toy-1234.pth'


def test_published_prefix_is_checked(http_server, monkeypatch, tmp_path):
    digest = hashlib.sha256(b'weights' * 9).hexdigest()
    entry, cached = _serve_with_hash(http_server, monkeypatch, tmp_path, digest[:8])
    assert zoo.fetch_weights(entry) == [str(cached)]
    bad = dataclasses.replace(entry, sha256='0' * 8)
    with pytest.raises(errors.DownloadError) as info:
        zoo.fetch_weights(bad)
    message = str(info.value)
    assert entry.url in message and str(cached) in message and '00000000' in message
    assert not cached.exists()


def _serve_unpublished(http_server, monkeypatch, tmp_path, state):
    pth_writer.write_state_dict(http_server.root / 'toy-1234.pth', state)
    entry, cached = _serve_with_hash(http_server, monkeypatch, tmp_path, zoo.UNPUBLISHED,
                                     (http_server.root / 'toy-1234.pth').read_bytes())
    monkeypatch.setattr(Toy, 'weights', {'imagenet': entry})
    return entry, cached


def test_unpublished_hash_is_recorded_then_verified(http_server, rng, monkeypatch,
                                                    tmp_path, caplog):
    state = _torch_state(rng)
    entry, cached = _serve_unpublished(http_server, monkeypatch, tmp_path, state)
    record = cached.with_name('toy-1234.pth.sha256')
    assert zoo.fetch_weights(entry) == [str(cached)]
    assert not record.exists()  # fetching alone trusts nothing
    with caplog.at_level(logging.WARNING, logger=weight_files.__name__):
        _assert_loaded(Toy(pretrained_model='imagenet'), _reference(state))
    assert 'publishes no sha256' in caplog.text and 'trusting' in caplog.text
    assert str(record) == zoo.trust_record_path(entry.main_file)
    digest = hashlib.sha256(cached.read_bytes()).hexdigest()
    assert record.read_text().strip() == digest
    _assert_loaded(Toy(pretrained_model='imagenet'), _reference(state))
    assert http_server.count('toy-1234.pth') == 1
    cached.write_bytes(b'weights')  # corrupt in the cache: fetched again, then verified
    zoo.fetch_weights(entry)
    assert http_server.count('toy-1234.pth') == 2
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == digest
    (http_server.root / 'toy-1234.pth').write_bytes(b'other' * 9)  # the source changed
    cached.write_bytes(b'x')
    with pytest.raises(errors.DownloadError, match='recorded at the first download'):
        zoo.fetch_weights(entry)
    assert not cached.exists()


def test_first_file_that_does_not_load_is_not_trusted(http_server, rng,
                                                      monkeypatch, tmp_path):
    wrong = _torch_state(rng, n_class=5)
    _, cached = _serve_unpublished(http_server, monkeypatch, tmp_path, wrong)
    with pytest.raises(errors.WeightLoadError):
        Toy(pretrained_model='imagenet')
    assert not cached.with_name('toy-1234.pth.sha256').exists()
    assert not cached.exists()  # deleted, so that the next load fetches it again
    right = _torch_state(rng)
    pth_writer.write_state_dict(http_server.root / 'toy-1234.pth', right)
    _assert_loaded(Toy(pretrained_model='imagenet'), _reference(right))
    assert cached.with_name('toy-1234.pth.sha256').exists()


def test_corrupt_first_file_is_not_trusted(http_server, rng, monkeypatch,
                                           tmp_path):
    _, cached = _serve_unpublished(http_server, monkeypatch, tmp_path,
                                   _torch_state(rng))
    (http_server.root / 'toy-1234.pth').write_bytes(b'<html>not found</html>')
    with pytest.raises(errors.CorruptFileError, match='toy-1234.pth'):
        Toy(pretrained_model='imagenet')
    assert not cached.with_name('toy-1234.pth.sha256').exists()


def test_forget_trust_removes_the_record(http_server, rng, monkeypatch, tmp_path):
    first = _torch_state(rng)
    entry, cached = _serve_unpublished(http_server, monkeypatch, tmp_path, first)
    Toy(pretrained_model='imagenet')
    record = pathlib.Path(zoo.trust_record_path(entry.main_file))
    assert record.exists()
    second = _torch_state(rng)  # the source publishes new weights under the same name
    pth_writer.write_state_dict(http_server.root / 'toy-1234.pth', second)
    cached.unlink()
    with pytest.raises(errors.DownloadError, match='--forget'):
        Toy(pretrained_model='imagenet')
    removed = zoo.forget_trust(Toy, 'imagenet')
    assert str(record) in removed and not record.exists()
    _assert_loaded(Toy(pretrained_model='imagenet'), _reference(second))
    assert record.read_text().strip() == hashlib.sha256(cached.read_bytes()).hexdigest()
    with pytest.raises(ValueError, match='no weights'):
        zoo.forget_trust(Toy, 'voc')


def test_prefix_entry_loads_and_caches_by_full_hash(http_server, rng, monkeypatch,
                                                   tmp_path):
    state, cached = _serve_toy(http_server, rng, monkeypatch, tmp_path)
    full = Toy.weights['imagenet'].sha256
    monkeypatch.setattr(Toy, 'weights', {
        'imagenet': dataclasses.replace(Toy.weights['imagenet'], sha256=full[:8])})
    _assert_loaded(Toy(pretrained_model='imagenet'), _reference(state))
    stamp = npz_serializer.read_npz(
        cached.with_name('toy-1234.pth.cvzoo.npz'))[conversion_cache.CACHE_KEY]
    assert full in stamp.tobytes().decode()
