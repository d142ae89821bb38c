"""Tests of the torch-free PyTorch checkpoint reader (zip and legacy layouts)."""

import logging
import os
import pickle
import shutil
import zipfile

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.weights.converters import torch_pth
from tests.helpers import malicious_pickles, pth_writer

DTYPES = ['float32', 'float64', 'float16', 'int64', 'int32', 'uint8', 'bool']


def _random(rng, shape, dtype):
    if dtype == 'bool':
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize('dtype', DTYPES, ids=DTYPES)
@pytest.mark.parametrize('layout', ['zip', 'legacy'])
def test_dtypes_round_trip(tmp_path, rng, dtype, layout):
    arrays = {'a': _random(rng, (2, 3, 4), dtype), 'scalar': _random(rng, (), dtype)}
    path = tmp_path / 'x.pth'
    pth_writer.write_state_dict(path, arrays, layout)
    state = torch_pth.load_torch_file(path)
    assert list(state) == ['a', 'scalar']
    for name, expected in arrays.items():
        assert state[name].dtype == expected.dtype
        numpy.testing.assert_array_equal(state[name], expected)


def test_bfloat16_becomes_float32(tmp_path):
    values = numpy.array([1.0, -2.5, 3.140625, 0.0], numpy.float32)
    raw = (values.view(numpy.uint32) >> 16).astype(numpy.uint16)
    t = pth_writer.Tensor('0', raw, 0, (2, 2), (2, 1), element_type='bfloat16')
    pth_writer.write_zip(tmp_path / 'x.pth', {'w': t}, [t])
    state = torch_pth.load_torch_file(tmp_path / 'x.pth')
    assert state['w'].dtype == numpy.float32
    numpy.testing.assert_array_equal(state['w'], values.reshape(2, 2))


STRIDED = {
    'transpose': (0, (4, 3), (1, 4)),
    'offset_slice': (5, (2, 3), (4, 1)),
    'step': (1, (3,), (5,)),
    'broadcast_zero_stride': (2, (3, 2), (0, 1)),
    'empty': (0, (0, 3), (3, 1)),
    'zero_dim': (7, (), ()),
}


@pytest.mark.parametrize('case', list(STRIDED), ids=list(STRIDED))
@pytest.mark.parametrize('layout', ['zip', 'legacy'])
def test_non_contiguous_views(tmp_path, case, layout):
    storage = numpy.arange(16, dtype=numpy.float32)
    offset, size, stride = STRIDED[case]
    t = pth_writer.Tensor('0', storage, offset, size, stride)
    write = pth_writer.write_zip if layout == 'zip' else pth_writer.write_legacy
    write(tmp_path / 'x.pth', {'v': t}, [t])
    got = torch_pth.load_torch_file(tmp_path / 'x.pth')['v']
    expected = numpy.empty(size, numpy.float32)
    for index in numpy.ndindex(*size):
        expected[index] = storage[offset + sum(i * s for i, s in zip(index, stride))]
    assert got.flags.c_contiguous and got.flags.writeable
    numpy.testing.assert_array_equal(got, expected)


def test_shared_storage_zip(tmp_path):
    storage = numpy.arange(12, dtype=numpy.float32)
    first = pth_writer.Tensor('s', storage, 0, (2, 3), (3, 1))
    second = pth_writer.Tensor('s', storage, 6, (6,), (1,))
    pth_writer.write_zip(tmp_path / 'x.pth', {'a': first, 'b': second}, [first, second])
    state = torch_pth.load_torch_file(tmp_path / 'x.pth')
    numpy.testing.assert_array_equal(state['a'], storage[:6].reshape(2, 3))
    numpy.testing.assert_array_equal(state['b'], storage[6:])


def test_legacy_view_of_root_storage(tmp_path):
    root = pth_writer.Tensor('root', numpy.arange(10, dtype=numpy.float32), 0, (10,), (1,))
    view = pth_writer.Tensor('view', numpy.arange(4, 8, dtype=numpy.float32), 1, (3,), (1,))
    pth_writer.write_legacy(tmp_path / 'x.pth', {'root': root, 'view': view}, [root, view],
                            views={'view': ('root', 4)})
    state = torch_pth.load_torch_file(tmp_path / 'x.pth')
    numpy.testing.assert_array_equal(state['root'], numpy.arange(10))
    numpy.testing.assert_array_equal(state['view'], [5, 6, 7])


def test_big_endian_zip(tmp_path, rng):
    array = rng.standard_normal((3, 5)).astype(numpy.float32)
    t = pth_writer.tensor('0', array)
    pth_writer.write_zip(tmp_path / 'x.pth', {'w': t}, [t], byteorder='big')
    numpy.testing.assert_array_equal(torch_pth.load_torch_file(tmp_path / 'x.pth')['w'], array)


@pytest.mark.parametrize('key', ['state_dict', 'model'])
def test_nested_state_dict(tmp_path, caplog, key):
    t = pth_writer.tensor('0', numpy.ones((2, 2), numpy.float32))
    checkpoint = {'epoch': 7, 'optimizer': {'lr': 0.1}, key: pth_writer.OrderedDictOf({'w': t})}
    pth_writer.write_zip(tmp_path / 'x.pth', checkpoint, [t])
    with caplog.at_level(logging.INFO, logger=torch_pth.__name__):
        state = torch_pth.load_torch_file(tmp_path / 'x.pth')
    assert list(state) == ['w']
    assert repr(key) in caplog.text
    whole = torch_pth.load_torch_checkpoint(tmp_path / 'x.pth')
    assert whole['epoch'] == 7 and whole['optimizer'] == {'lr': 0.1}


def test_parameter_and_rebuild_from_type(tmp_path):
    t = pth_writer.tensor('0', numpy.arange(3, dtype=numpy.float32))
    Global, Reduce = pth_writer.Global, pth_writer.Reduce
    parameter = Reduce(Global('torch._utils', '_rebuild_parameter'),
                       (t, True, Reduce(Global('collections', 'OrderedDict'), ())))
    subclass = Reduce(Global('torch._tensor', '_rebuild_from_type_v2'),
                      (Global('torch._utils', '_rebuild_parameter'),
                       Global('torch.nn.parameter', 'Parameter'), (t, True, {}), {}))
    pth_writer.write_zip(tmp_path / 'x.pth', {'p': parameter, 'q': subclass}, [t])
    state = torch_pth.load_torch_file(tmp_path / 'x.pth')
    numpy.testing.assert_array_equal(state['p'], [0, 1, 2])
    numpy.testing.assert_array_equal(state['q'], [0, 1, 2])


@pytest.mark.parametrize('payload', ['os_system', 'builtins_eval', 'builtins_exec',
                                     'subprocess_call'])
@pytest.mark.parametrize('layout', ['zip', 'legacy'])
def test_malicious_pickle_is_refused(tmp_path, payload, layout):
    canary = tmp_path / 'canary'
    data = malicious_pickles.code_payloads(canary)[payload]
    path = tmp_path / 'evil.pth'
    malicious_pickles.write_raw_pickle(path, data, layout)
    with pytest.raises(torch_pth.UnsafePickleError, match='refused') as info:
        torch_pth.load_torch_file(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, errors.CorruptFileError)
    assert not canary.exists()


def test_malicious_global_inside_legacy_header(tmp_path):
    canary = tmp_path / 'canary'
    path = tmp_path / 'evil.pth'
    path.write_bytes(pickle.dumps(malicious_pickles.RunsCode(os.system, f'touch {canary}'),
                                  protocol=2))
    with pytest.raises(torch_pth.UnsafePickleError, match='posix.system|os.system|nt.system'):
        torch_pth.load_torch_file(path)
    assert not canary.exists()


@pytest.mark.parametrize('payload', list(malicious_pickles.BUILD_PAYLOADS))
@pytest.mark.parametrize('layout', ['zip', 'legacy'])
def test_build_onto_a_stand_in_is_refused_and_changes_nothing(tmp_path, rng,
                                                              payload, layout):
    evil = tmp_path / 'evil.pth'
    malicious_pickles.write_raw_pickle(evil, malicious_pickles.BUILD_PAYLOADS[payload], layout)
    with pytest.raises(torch_pth.UnsafePickleError, match='BUILD') as info:
        torch_pth.load_torch_file(evil)
    assert str(evil) in str(info.value)
    # a good file read afterwards in the same process is read as written
    arrays = {'f': _random(rng, (3, 4), 'float32'), 'i': _random(rng, (5,), 'int64')}
    tensors = [pth_writer.tensor(str(i), a) for i, a in enumerate(arrays.values())]
    good = tmp_path / 'good.pth'
    write = pth_writer.write_zip if layout == 'zip' else pth_writer.write_legacy
    write(good, dict(zip(arrays, tensors)), tensors)
    state = torch_pth.load_torch_file(good)
    for name, array in arrays.items():
        assert state[name].dtype == array.dtype
        numpy.testing.assert_array_equal(state[name], array)


def _write_sample(path, layout):
    t = pth_writer.tensor('0', numpy.arange(64, dtype=numpy.float32).reshape(8, 8))
    write = pth_writer.write_zip if layout == 'zip' else pth_writer.write_legacy
    write(path, {'w': t}, [t])


@pytest.mark.parametrize('cut', [0.3, 0.9, 0.99], ids=['30%', '90%', '99%'])
@pytest.mark.parametrize('layout', ['zip', 'legacy'])
def test_truncated_file_names_the_file(tmp_path, layout, cut):
    path = tmp_path / 'x.pth'
    _write_sample(path, layout)
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * cut)])
    with pytest.raises(errors.CorruptFileError, match='x.pth'):
        torch_pth.load_torch_file(path)


def test_storage_shorter_than_declared(tmp_path):
    t = pth_writer.tensor('0', numpy.zeros(8, numpy.float32))
    pth_writer.write_zip(tmp_path / 'a.pth', {'w': t}, [t])
    with zipfile.ZipFile(tmp_path / 'a.pth') as src, \
            zipfile.ZipFile(tmp_path / 'b.pth', 'w') as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, data[:-4] if name.endswith('data/0') else data)
    with pytest.raises(errors.CorruptFileError, match='b.pth.*truncated'):
        torch_pth.load_torch_file(tmp_path / 'b.pth')


def test_view_outside_storage(tmp_path):
    t = pth_writer.Tensor('0', numpy.zeros(6, numpy.float32), 2, (2, 3), (3, 1))
    pth_writer.write_zip(tmp_path / 'x.pth', {'w': t}, [t])
    with pytest.raises(errors.CorruptFileError, match='does not fit'):
        torch_pth.load_torch_file(tmp_path / 'x.pth')


@pytest.mark.parametrize('content', [b'', b'hello world, not a checkpoint', b'PK\x03\x04junk'],
                         ids=['empty', 'text', 'broken_zip'])
def test_not_a_checkpoint(tmp_path, content):
    path = tmp_path / 'x.pth'
    path.write_bytes(content)
    with pytest.raises(errors.CorruptFileError, match='x.pth'):
        torch_pth.load_torch_file(path)


def test_zip_without_data_pkl(tmp_path):
    with zipfile.ZipFile(tmp_path / 'x.pth', 'w') as out:
        out.writestr('archive/other.txt', 'x')
    with pytest.raises(errors.CorruptFileError, match='data.pkl'):
        torch_pth.load_torch_file(tmp_path / 'x.pth')


def test_no_tensors(tmp_path):
    pth_writer.write_zip(tmp_path / 'x.pth', {'epoch': 3})
    with pytest.raises(errors.CorruptFileError, match='epoch'):
        torch_pth.load_torch_file(tmp_path / 'x.pth')


REAL_FILES = {
    'espnet_p_2_q_8_camvid.pth': (189, 'encoder.level1.conv.weight', (16, 3, 3, 3)),
    'squeezenet1_1_deepscale.pth': (52, 'features.0.weight', (64, 3, 3, 3)),
}


@pytest.mark.parametrize('name', list(REAL_FILES), ids=['legacy', 'zip'])
def test_real_files(shared_data, tmp_path, name):
    n_array, key, shape = REAL_FILES[name]
    state = torch_pth.load_torch_file(shared_data / 'weights' / name)
    assert len(state) == n_array
    assert state[key].shape == shape and state[key].dtype == numpy.float32
    assert all(numpy.isfinite(a).all() for a in state.values())
    copy = tmp_path / name
    shutil.copyfile(shared_data / 'weights' / name, copy)
    copy.write_bytes(copy.read_bytes()[:-100])
    with pytest.raises(errors.CorruptFileError, match=name):
        torch_pth.load_torch_file(copy)


def _assert_same_as_torch(torch, path, state):
    expected = torch.load(path, weights_only=True, map_location='cpu')
    if 'state_dict' in expected:
        expected = expected['state_dict']
    assert list(state) == list(expected)
    for name, value in expected.items():
        if value.dtype == torch.bfloat16:
            value = value.float()
        value = value.detach()
        assert state[name].dtype == value.numpy().dtype, name
        numpy.testing.assert_array_equal(state[name], value.numpy(), err_msg=name)


@pytest.mark.reference
@pytest.mark.parametrize('name', list(REAL_FILES), ids=['legacy', 'zip'])
def test_real_files_match_torch(shared_data, name):
    torch = pytest.importorskip('torch')
    path = shared_data / 'weights' / name
    _assert_same_as_torch(torch, path, torch_pth.load_torch_file(path))


@pytest.mark.reference
@pytest.mark.parametrize('layout', ['zip', 'legacy'])
def test_torch_save_matches_torch_load(tmp_path, layout):
    torch = pytest.importorskip('torch')
    generator = torch.Generator().manual_seed(0)
    base = torch.randn(6, 5, generator=generator)
    state = {
        'conv.weight': torch.nn.Parameter(torch.randn(4, 3, 3, 3, generator=generator)),
        'transposed': base.t(), 'sliced': base[1:5:2, 1:], 'half': base.half(),
        'bf16': base.bfloat16(), 'double': base.double()[::2], 'long': torch.arange(7),
        'mask': base > 0, 'scalar': torch.tensor(3.5), 'empty': torch.zeros(0, 4),
        'bn.num_batches_tracked': torch.tensor(12),
    }
    path = tmp_path / 'x.pth'
    torch.save({'state_dict': state, 'epoch': 3}, path,
               _use_new_zipfile_serialization=(layout == 'zip'))
    _assert_same_as_torch(torch, path, torch_pth.load_torch_file(path))
