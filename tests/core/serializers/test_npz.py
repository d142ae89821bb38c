"""save_npz / load_npz: round trips, one-message errors, strict=False, atomic write."""

import os
import zipfile

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import backend, initializers
from cvzoo.core.links.link import Chain, ChainList, Link
from cvzoo.core.serializers import npz
from cvzoo.core.variable import Parameter


class Affine(Link):
    def __init__(self, n_in=3, n_out=2, lazy=False):
        super().__init__()
        with self.init_scope():
            shape = None if lazy else (n_out, n_in)
            self.W = Parameter(initializers.Normal(1.0), shape)
            self.b = Parameter(initializers.Normal(1.0), (n_out,))
        self.add_persistent('count', 3)
        self.add_persistent('avg', numpy.random.rand(n_out).astype(numpy.float32))
        self.add_persistent('scale', 0.5)
        self.add_persistent('flag', True)


class Net(Chain):
    def __init__(self, lazy=False, n_out=2):
        super().__init__()
        with self.init_scope():
            self.fc1 = Affine(3, 4, lazy=lazy)
            self.blocks = ChainList(Affine(4, 4), Affine(4, n_out))


def _assert_same(a, b):
    for (pa, qa), (pb, qb) in zip(a.namedparams(), b.namedparams()):
        assert pa == pb
        numpy.testing.assert_array_equal(qa.array, qb.array)
    for (_, la), (_, lb) in zip(a.namedlinks(), b.namedlinks()):
        for name in la._persistent:
            numpy.testing.assert_array_equal(la.__dict__[name], lb.__dict__[name])
            assert type(la.__dict__[name]) is type(lb.__dict__[name])


def _perturb(net):
    net.fc1.count = 9
    net.blocks[1].scale = 2.5
    net.blocks[0].flag = False
    return net


@pytest.mark.parametrize('compression', [True, False], ids=['compressed', 'plain'])
def test_round_trip(tmp_path, compression):
    source = _perturb(Net())
    path = tmp_path / 'net.npz'
    npz.save_npz(path, source, compression=compression)
    target = Net()
    assert npz.load_npz(path, target) is target
    _assert_same(source, target)
    assert target.fc1.count == 9 and target.blocks[0].flag is False


def test_file_keys_are_paths(tmp_path):
    path = tmp_path / 'net.npz'
    npz.save_npz(path, Net())
    with numpy.load(path) as data:
        assert {'fc1/W', 'fc1/count', 'blocks/0/b', 'blocks/1/avg'} <= set(data.files)


def test_file_object(tmp_path):
    path = tmp_path / 'net.npz'
    source = Net()
    with open(path, 'wb') as handle:
        npz.save_npz(handle, source)
    target = Net()
    with open(path, 'rb') as handle:
        npz.load_npz(handle, target)
    _assert_same(source, target)


def test_lazy_parameter_gets_loaded_shape(tmp_path):
    path = tmp_path / 'net.npz'
    source = Net()
    npz.save_npz(path, source)
    target = Net(lazy=True)
    assert target.fc1.W.array is None
    npz.load_npz(path, target)
    _assert_same(source, target)


def test_one_error_lists_missing_unexpected_and_misshaped(tmp_path):
    path = tmp_path / 'net.npz'
    source = Net(n_out=5)
    source.blocks.append(Affine(2, 2))
    npz.save_npz(path, source)
    numpy.savez(tmp_path / 'other.npz', **{k: v for k, v in numpy.load(path).items()
                                           if k != 'fc1/W'})
    target = Net()
    before = {p: q.array.copy() for p, q in target.namedparams()}
    with pytest.raises(errors.WeightLoadError) as info:
        npz.load_npz(tmp_path / 'other.npz', target)
    message = str(info.value)
    assert 'other.npz' in message
    assert 'missing: fc1/W' in message
    assert 'unexpected: blocks/2/W' in message and 'blocks/2/avg' in message
    assert 'blocks/1/W (file (5, 4), expected (2, 4))' in message
    assert 'blocks/1/b' in message and 'blocks/1/avg' in message
    assert isinstance(info.value, ValueError)
    for p, q in target.namedparams():
        numpy.testing.assert_array_equal(q.array, before[p])


@pytest.mark.parametrize('bad', [numpy.nan, numpy.inf, -numpy.inf], ids=['nan', 'inf', '-inf'])
def test_a_non_finite_array_is_refused_naming_the_first(tmp_path, bad):
    path = tmp_path / 'net.npz'
    npz.save_npz(path, Net())
    arrays = dict(numpy.load(path))
    for key in ('blocks/0/b', 'blocks/1/avg'):  # persistents count too
        arrays[key] = arrays[key].copy()
        arrays[key][0] = bad
    numpy.savez(path, **arrays)
    target = Net()
    before = {p: q.array.copy() for p, q in target.namedparams()}
    with pytest.raises(errors.WeightLoadError) as info:
        npz.load_npz(path, target)
    message = str(info.value)
    assert message.startswith(str(path))
    assert 'blocks/0/b holds NaN or inf (the first such array)' in message
    assert 'blocks/1/avg' not in message
    for p, q in target.namedparams():
        numpy.testing.assert_array_equal(q.array, before[p])


def test_strict_false_loads_the_subset(tmp_path):
    path = tmp_path / 'net.npz'
    source = Net()
    source.blocks.append(Affine(2, 2))
    del source.fc1.W
    npz.save_npz(path, source)
    target = Net()
    old_fc1_W = target.fc1.W.array.copy()
    npz.load_npz(path, target, strict=False)
    numpy.testing.assert_array_equal(target.fc1.W.array, old_fc1_W)
    numpy.testing.assert_array_equal(target.blocks[1].W.array, source.blocks[1].W.array)


def test_strict_false_still_refuses_misshaped(tmp_path):
    path = tmp_path / 'net.npz'
    npz.save_npz(path, Net(n_out=5))
    with pytest.raises(errors.WeightLoadError, match='mis-shaped: blocks/1/W'):
        npz.load_npz(path, Net(), strict=False)


def test_path_selects_a_subtree(tmp_path):
    path = tmp_path / 'net.npz'
    source = Net()
    npz.save_npz(path, source)
    target = Affine(3, 4)
    npz.load_npz(path, target, path='fc1/')
    numpy.testing.assert_array_equal(target.W.array, source.fc1.W.array)


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / 'net.npz'
    npz.save_npz(path, Net())
    old_bytes = path.read_bytes()

    def failing_savez(handle, **arrays):
        handle.write(b'half')
        raise RuntimeError('disk full')

    monkeypatch.setattr(numpy, 'savez_compressed', failing_savez)
    with pytest.raises(RuntimeError, match='disk full'):
        npz.save_npz(path, Net())
    assert path.read_bytes() == old_bytes
    assert os.listdir(tmp_path) == ['net.npz']


def test_save_keeps_exact_name(tmp_path):
    npz.save_npz(tmp_path / 'weights.bin', Net())
    assert os.listdir(tmp_path) == ['weights.bin']


@pytest.mark.parametrize('content', [b'', b'not a zip file at all', 'truncated'],
                         ids=['empty', 'garbage', 'truncated'])
def test_corrupt_file_names_the_file(tmp_path, content):
    path = tmp_path / 'bad.npz'
    if content == 'truncated':
        npz.save_npz(path, Net())
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
    else:
        path.write_bytes(content)
    with pytest.raises(errors.CorruptFileError, match='bad.npz'):
        npz.load_npz(path, Net())


def test_pickled_content_is_refused(tmp_path):
    path = tmp_path / 'pickled.npz'
    with zipfile.ZipFile(path, 'w') as archive, archive.open('fc1/W.npy', 'w') as handle:
        numpy.save(handle, numpy.array([{'a': 1}], dtype=object), allow_pickle=True)
    with pytest.raises(errors.CorruptFileError, match='pickled.npz'):
        npz.load_npz(path, Net())


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        npz.load_npz(tmp_path / 'absent.npz', Net())


def test_round_trip_on_device(tmp_path, device):
    path = tmp_path / 'net.npz'
    source = Net().to_device(device)
    npz.save_npz(path, source)
    target = Net().to_device(device)
    npz.load_npz(path, target)
    assert isinstance(target.fc1.avg, target.xp.ndarray)
    numpy.testing.assert_array_equal(backend.to_numpy(target.fc1.W.array),
                                     backend.to_numpy(source.fc1.W.array))
