"""save_hdf5 / load_hdf5: round trips, one-message errors, atomic write, corrupt files."""

import os

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import initializers
from cvzoo.core.links.link import Chain, ChainList, Link
from cvzoo.core.serializers import hdf5
from cvzoo.core.variable import Parameter

pytest.importorskip('h5py')


class Affine(Link):
    def __init__(self, n_in=3, n_out=2, lazy=False):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializers.Normal(1.0), None if lazy else (n_out, n_in))
            self.b = Parameter(initializers.Normal(1.0), (n_out,))
        self.add_persistent('count', 3)
        self.add_persistent('avg', numpy.random.rand(n_out).astype(numpy.float32))


class Net(Chain):
    def __init__(self, lazy=False, n_out=2):
        super().__init__()
        with self.init_scope():
            self.fc1 = Affine(3, 4, lazy=lazy)
            self.blocks = ChainList(Affine(4, 4), Affine(4, n_out))


@pytest.mark.parametrize('compression', [4, 0], ids=['gzip', 'plain'])
def test_round_trip(tmp_path, compression):
    path = tmp_path / 'net.h5'
    source = Net()
    source.blocks[1].count = 11
    hdf5.save_hdf5(path, source, compression=compression)
    target = Net(lazy=True)
    hdf5.load_hdf5(path, target)
    for (pa, qa), (pb, qb) in zip(source.namedparams(), target.namedparams()):
        assert pa == pb
        numpy.testing.assert_array_equal(qa.array, qb.array)
    numpy.testing.assert_array_equal(target.fc1.avg, source.fc1.avg)
    assert target.blocks[1].count == 11 and isinstance(target.blocks[1].count, int)


def test_one_error_lists_every_problem(tmp_path):
    path = tmp_path / 'net.h5'
    source = Net(n_out=5)
    source.blocks.append(Affine(2, 2))
    del source.fc1.b
    hdf5.save_hdf5(path, source)
    target = Net()
    before = target.blocks[1].W.array.copy()
    with pytest.raises(errors.WeightLoadError) as info:
        hdf5.load_hdf5(path, target)
    message = str(info.value)
    for piece in ('net.h5', 'missing: fc1/b', 'unexpected: blocks/2/W', 'mis-shaped: blocks/1/W'):
        assert piece in message
    numpy.testing.assert_array_equal(target.blocks[1].W.array, before)
    hdf5.load_hdf5(tmp_path / 'net.h5', Net(n_out=5), strict=False)


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    import h5py

    path = tmp_path / 'net.h5'
    hdf5.save_hdf5(path, Net())
    old_bytes = path.read_bytes()
    original = h5py.Group.create_dataset
    calls = []

    def failing_create_dataset(self, name, **kwargs):
        calls.append(name)
        if len(calls) == 3:
            raise RuntimeError('disk full')
        return original(self, name, **kwargs)

    monkeypatch.setattr(h5py.Group, 'create_dataset', failing_create_dataset)
    with pytest.raises(RuntimeError, match='disk full'):
        hdf5.save_hdf5(path, Net())
    assert path.read_bytes() == old_bytes
    assert os.listdir(tmp_path) == ['net.h5']


def test_unsupported_value_is_refused_before_writing(tmp_path):
    class Broken(Link):
        def serialize(self, serializer):
            serializer('x', object())

    with pytest.raises(TypeError, match='x'):
        hdf5.save_hdf5(tmp_path / 'broken.h5', Broken())
    assert os.listdir(tmp_path) == []


def test_corrupt_file_names_the_file(tmp_path):
    path = tmp_path / 'net.h5'
    hdf5.save_hdf5(path, Net())
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 3])
    with pytest.raises(errors.CorruptFileError, match='net.h5'):
        hdf5.load_hdf5(path, Net())
