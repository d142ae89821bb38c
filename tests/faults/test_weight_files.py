"""Bad weight files loaded into a model: each is refused with the right class, naming the
file (and every key that does not fit); no payload runs, and no converted cache is
written (the fixture checks $CVZOO_HOME)."""

import io
import os
import zipfile

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import links
from cvzoo.models import zoo
from cvzoo.models.weights.converters import darknet, torch_pth
from tests.helpers import malicious_pickles, memory_cap, pth_writer


class _Payload:
    """Touches ``canary`` when unpickled with plain pickle."""

    def __init__(self, canary):
        self.canary = canary

    def __reduce__(self):
        return os.system, (f'touch {self.canary}',)


def _npz_bytes(**arrays):
    buffer = io.BytesIO()
    numpy.savez(buffer, **arrays)
    return buffer.getvalue()


def _good_npz():
    return _npz_bytes(W=numpy.zeros((2, 3), numpy.float32), b=numpy.zeros(2, numpy.float32))


def _pth_zip(path):
    tensor = pth_writer.tensor('0', numpy.zeros((2, 3), numpy.float32))
    pth_writer.write_zip(path, {'W': tensor}, [tensor])
    return path.read_bytes()


def _bytes(content):
    def write(path, canary):
        path.write_bytes(content() if callable(content) else content)
    return write


def _truncated_pth(path, canary):
    path.write_bytes(_pth_zip(path)[:200])


def _npz_with_pickle(path, canary):
    path.write_bytes(_npz_bytes(W=numpy.array([_Payload(canary)], dtype=object)))


def _raw_pickle(payload, layout):
    def write(path, canary):
        data = (malicious_pickles.code_payloads(canary)[payload]
                if payload in ('os_system', 'builtins_exec')
                else malicious_pickles.BUILD_PAYLOADS[payload])
        malicious_pickles.write_raw_pickle(path, data, layout)
    return write


# case: (writer(path, canary), error, extra text the message holds)
BAD_FILES = {
    'empty': (_bytes(b''), errors.CorruptFileError, ''),
    'wrong_magic': (_bytes(b'\x7fELF' + b'\0' * 60), errors.CorruptFileError, ''),
    'text': (_bytes(b'<html>403 Forbidden</html>\n' * 4), errors.CorruptFileError, ''),
    'truncated_npz': (_bytes(lambda: _good_npz()[:150]), errors.CorruptFileError, ''),
    'npz_cut_before_directory': (_bytes(lambda: _good_npz()[:-30]), errors.CorruptFileError,
                                 ''),
    'truncated_pth_zip': (_truncated_pth, errors.CorruptFileError, ''),
    'npz_with_pickled_object': (_npz_with_pickle, errors.CorruptFileError, 'allow_pickle'),
    'pth_os_system_zip': (_raw_pickle('os_system', 'zip'), torch_pth.UnsafePickleError,
                          'refused'),
    'pth_exec_legacy': (_raw_pickle('builtins_exec', 'legacy'), torch_pth.UnsafePickleError,
                        'refused'),
    'pth_build_onto_storage': (_raw_pickle('storage_dict', 'zip'), torch_pth.UnsafePickleError,
                               'BUILD'),
    'pth_build_onto_dtype': (_raw_pickle('dtype', 'legacy'), torch_pth.UnsafePickleError,
                             'BUILD'),
}


@pytest.mark.parametrize('case', list(BAD_FILES), ids=list(BAD_FILES))
def test_bad_weight_file_is_named_and_runs_nothing(tmp_path, case):
    write, error, extra = BAD_FILES[case]
    path, canary = tmp_path / 'weights.pth', tmp_path / 'canary'
    write(path, canary)
    model = links.Linear(3, 2)
    before = {name: param.array.copy() for name, param in model.namedparams()}
    with pytest.raises(error) as info:
        zoo.load_weights(model, path)
    assert type(info.value) is error
    assert str(path) in str(info.value) and extra in str(info.value)
    assert not canary.exists()
    for name, param in model.namedparams():
        numpy.testing.assert_array_equal(param.array, before[name])


# case: (arrays in the file, names the message must hold)
MISFITS = {
    'missing_key': ({'W': numpy.zeros((2, 3), numpy.float32)}, ['b']),
    'unexpected_key': ({'W': numpy.zeros((2, 3), numpy.float32),
                        'b': numpy.zeros(2, numpy.float32),
                        'extra': numpy.zeros(1, numpy.float32)}, ['extra']),
    'wrong_shape': ({'W': numpy.zeros((3, 2), numpy.float32),
                     'b': numpy.zeros(2, numpy.float32)}, ['W', '(3, 2)', '(2, 3)']),
    'all_three_at_once': ({'W': numpy.zeros((4,), numpy.float32),
                           'c': numpy.zeros(1, numpy.float32)}, ['W', 'b', 'c']),
    'empty_npz': ({'_': numpy.zeros(0)}, ['W', 'b', '_']),
}


@pytest.mark.parametrize('case', list(MISFITS), ids=list(MISFITS))
def test_weights_that_do_not_fit_name_every_key(tmp_path, case):
    arrays, names = MISFITS[case]
    path = tmp_path / 'weights.npz'
    path.write_bytes(_npz_bytes(**arrays))
    with pytest.raises(errors.WeightLoadError) as info:
        zoo.load_weights(links.Linear(3, 2), path)
    message = str(info.value)
    assert 'weights.npz' in message
    for name in names:
        assert name in message


def _darknet_file(path, n_value):
    header = numpy.array([0, 2, 5], '<i4').tobytes() + numpy.array([0], '<i8').tobytes()
    path.write_bytes(header + numpy.zeros(n_value, '<f4').tobytes())


# case: (values in the file, the shapes the model reads)
DARKNET = {
    'too_short': (5, [(2,), (2, 3)]),
    'too_long': (12, [(2,), (2, 3)]),
    'header_only': (0, [(2,)]),
}


@pytest.mark.parametrize('case', list(DARKNET), ids=list(DARKNET))
def test_darknet_weights_of_the_wrong_length_are_named(tmp_path, case):
    n_value, shapes = DARKNET[case]
    path = tmp_path / 'yolo.weights'
    _darknet_file(path, n_value)
    with pytest.raises(errors.CorruptFileError) as info:
        darknet.read_darknet_weights(path, shapes)
    assert type(info.value) is errors.CorruptFileError and 'yolo.weights' in str(info.value)


def test_load_weights_argument_errors(tmp_path):
    with pytest.raises(TypeError, match='path_or_key'):
        zoo.load_weights(links.Linear(3, 2), 42)


def _zip_tensor(tensor, **options):
    def write(path):
        pth_writer.write_zip(path, {'W': tensor}, [tensor], **options)
    return write


def _small_tensor(key='0', **changes):
    """A (2, 3) float32 tensor of its own storage, with ``changes`` to its geometry."""
    fields = dict(offset=0, size=(2, 3), stride=(3, 1))
    fields.update(changes)
    return pth_writer.Tensor(key, numpy.zeros(6, numpy.float32), **fields)


def _legacy_tensor(tensor, **options):
    def write(path):
        pth_writer.write_legacy(path, {'W': tensor}, [tensor], **options)
    return write


def _raw_zip_pickle(data):
    def write(path):
        pth_writer.write_zip(path, None, data_pkl=data)
    return write


def _raw_legacy_pickle(data):
    def write(path):
        malicious_pickles.write_raw_pickle(path, data, 'legacy')
    return write


def _many_views(path):
    """One 4 MB storage read as 100 full-size tensors: 400 MB from a 4 MB file."""
    storage = numpy.zeros(1 << 20, numpy.float32)
    tensors = [pth_writer.Tensor('0', storage, 0, storage.shape, (1,)) for _ in range(100)]
    pth_writer.write_zip(path, {f'W{i}': t for i, t in enumerate(tensors)}, tensors[:1])


def _npy_header(shape, descr='<f4'):
    buffer = io.BytesIO()
    numpy.lib.format.write_array_header_1_0(
        buffer, {'descr': descr, 'fortran_order': False, 'shape': shape})
    return buffer.getvalue()


def _npz_member(header, chunks, compression=zipfile.ZIP_STORED):
    def write(path):
        with zipfile.ZipFile(path, 'w', compression, compresslevel=1) as archive, \
                archive.open('W.npy', 'w', force_zip64=True) as member:
            member.write(header)
            for chunk in chunks():
                member.write(chunk)
    return write


def _h5_unwritten_dataset(path):
    h5py = pytest.importorskip('h5py')
    with h5py.File(path, 'w') as handle:
        handle.create_dataset('W', shape=(100000, 100000), dtype='f4')


def _h5_chunk_larger_than_its_dataset(path):
    """One float32 in a gzip chunk of 2 ** 27 values (512 MiB inflated) of a 2 MB file."""
    h5py = pytest.importorskip('h5py')
    with h5py.File(path, 'w') as handle:
        dataset = handle.create_dataset('W', shape=(1,), maxshape=(None,), chunks=(1 << 27,),
                                        dtype='f4', compression='gzip', compression_opts=1)
        dataset[0] = 1


# Files that declare far more memory than they hold. case: (file name, writer(path),
# texts the message must hold besides the file). Each runs under an address-space cap,
# so that a reader that allocates what the file declares fails with MemoryError instead
# of exhausting the machine.
HOSTILE_FILES = {
    # 657 bytes: one float32 broadcast by stride 0 to 100000 x 100000 (37 GiB)
    'pth_stride_0_broadcast': ('w.pth', _zip_tensor(pth_writer.Tensor(
        '0', numpy.zeros(1, numpy.float32), 0, (100000, 100000), (0, 0))), ["'W'"]),
    # a legacy storage of 2 ** 40 elements in a file of 300 bytes
    'pth_legacy_storage_2_40': ('w.pth', _legacy_tensor(_small_tensor(),
                                                        numels={'0': 2 ** 40}), ["'0'"]),
    'pth_legacy_storage_negative': ('w.pth', _legacy_tensor(_small_tensor(),
                                                            numels={'0': -5}), ["'0'"]),
    # a 2 MB member inflating to 512 MiB for a storage of 6 elements
    'pth_member_inflates': ('w.pth', _zip_tensor(_small_tensor(), storage_chunks={
        '0': pth_writer.zeros(512 << 20)}), ["'W'", 'archive/data/0']),
    # 512 MiB declared consistently by the pickle and the member, from 2 MB
    'pth_member_beyond_budget': ('w.pth', _zip_tensor(pth_writer.Tensor(
        '0', numpy.broadcast_to(numpy.float32(0), (1 << 27,)), 0, (1 << 27,), (1,)),
        storage_chunks={'0': pth_writer.zeros(512 << 20)}), ["'0'", "'W'"]),
    'pth_many_views_of_one_storage': ('w.pth', _many_views, ["'W"]),
    'pth_nested_100000_deep': ('w.pth', _raw_zip_pickle(malicious_pickles.nested_lists(
        100000)), ['levels deep', '[0][0]']),
    'pth_cyclic_list': ('w.pth', _raw_zip_pickle(malicious_pickles.cyclic_list()),
                        ['levels deep', '[0][0]']),
    'pth_lists_doubling_40_times': ('w.pth', _raw_zip_pickle(
        malicious_pickles.doubling_lists(40)), ['dict']),
    'pth_memo_index_2_30': ('w.pth', _raw_zip_pickle(malicious_pickles.memo_index(1 << 30)),
                            ['dict']),
    # BINUNICODE8 of 2 ** 40 bytes
    'pth_pickle_string_2_40': ('w.pth', _raw_legacy_pickle(
        b'\x80\x04\x8d' + (1 << 40).to_bytes(8, 'little') + b'x.'), [str(1 << 40)]),
    'pth_negative_dimension': ('w.pth', _zip_tensor(_small_tensor(size=(-1, 3))), ["'W'"]),
    'pth_float_dimension': ('w.pth', _zip_tensor(_small_tensor(size=(2.0, 3))), ["'W'"]),
    'pth_stride_count_differs': ('w.pth', _zip_tensor(_small_tensor(stride=(1,))), ["'W'"]),
    'pth_offset_past_storage': ('w.pth', _zip_tensor(_small_tensor(offset=10, size=(2,),
                                                                   stride=(1,))), ["'W'"]),
    'npz_header_37_gib': ('w.npz', _npz_member(_npy_header((100000, 100000)),
                                               lambda: [bytes(24)]), ["'W'", '(100000, 100000)']),
    'npz_negative_shape': ('w.npz', _npz_member(_npy_header((-1, 3)), lambda: [bytes(24)]),
                           ["'W'"]),
    'npz_deflated_zeros_beyond_budget': ('w.npz', _npz_member(
        _npy_header((1 << 27,)), lambda: pth_writer.zeros(512 << 20), zipfile.ZIP_DEFLATED),
        ["'W'"]),
    'h5_unwritten_dataset_37_gib': ('w.h5', _h5_unwritten_dataset, ["'W'"]),
    'h5_chunk_larger_than_its_dataset': ('w.h5', _h5_chunk_larger_than_its_dataset,
                                         ["'W'", 'chunks']),
}


@pytest.mark.parametrize('case', list(HOSTILE_FILES), ids=list(HOSTILE_FILES))
def test_declared_sizes_are_checked_before_allocating(tmp_path, case):
    file_name, write, texts = HOSTILE_FILES[case]
    path = tmp_path / file_name
    write(path)
    with memory_cap.address_space_cap(), pytest.raises(errors.CorruptFileError) as info:
        zoo.load_weights(links.Linear(3, 2), path)
    message = str(info.value)
    assert str(path) in message
    for text in texts:
        assert text in message


def test_a_real_state_dict_fits_its_budget(tmp_path):
    """Views that share a storage (tied weights) and a stride-0 buffer load as before."""
    storage = numpy.arange(6, dtype=numpy.float32)
    tensors = [pth_writer.Tensor('0', storage, 0, (2, 3), (3, 1)),
               pth_writer.Tensor('0', storage, 0, (2, 3), (3, 1)),
               pth_writer.Tensor('1', numpy.ones(1, numpy.float32), 0, (4, 5), (0, 0))]
    path = tmp_path / 'tied.pth'
    pth_writer.write_zip(path, pth_writer.OrderedDictOf(zip(('W', 'W2', 'ones'), tensors)),
                         tensors)
    state = torch_pth.load_torch_file(path)
    numpy.testing.assert_array_equal(state['W2'], storage.reshape(2, 3))
    numpy.testing.assert_array_equal(state['ones'], numpy.ones((4, 5), numpy.float32))


_TINY_HEAD = '\n[convolutional]\nfilters=6\n\n[yolo]\nclasses=1\nanchors=1,1\nmask=0\n'
# case: (cfg text, texts the message must hold)
HOSTILE_CFGS = {
    'a_million_filters_of_100x100': (
        '[net]\nwidth=32\nheight=32\n\n[convolutional]\nfilters=1000000\nsize=100\n'
        + _TINY_HEAD, ['layer 0', 'parameters']),
    'negative_size': ('[net]\nwidth=32\nheight=32\n\n[convolutional]\nfilters=6\nsize=-3\n'
                      '\n[yolo]\nclasses=1\nanchors=1,1\nmask=0\n', ['layer 0', 'size=-3']),
    'zero_groups': ('[net]\nwidth=32\nheight=32\n\n[convolutional]\nfilters=6\ngroups=0\n'
                    '\n[yolo]\nclasses=1\nanchors=1,1\nmask=0\n', ['layer 0', 'groups=0']),
    'input_of_a_million_pixels_square': ('[net]\nwidth=1000000\nheight=1000000\n' + _TINY_HEAD,
                                         ['[net]', '1000000']),
    'upsample_by_1000': ('[net]\nwidth=32\nheight=32\n\n[upsample]\nstride=1000\n'
                         + _TINY_HEAD, ['layer 0', 'stride']),
}


@pytest.mark.parametrize('case', list(HOSTILE_CFGS), ids=list(HOSTILE_CFGS))
def test_a_darknet_cfg_is_checked_before_its_network_is_allocated(tmp_path, case):
    from cvzoo.models.detection.darknet import darknet_detector

    text, texts = HOSTILE_CFGS[case]
    cfg = tmp_path / 'hostile.cfg'
    cfg.write_text(text)
    with memory_cap.address_space_cap(), pytest.raises(errors.CorruptFileError) as info:
        darknet_detector.DarknetDetector(cfg)
    for expected in texts:
        assert expected in str(info.value)


def _nested_json(depth):
    return b'[' * depth + b']' * depth


def test_a_trained_model_config_nested_100000_deep_is_named(tmp_path):
    from cvzoo.models.weights import trained_model

    path = tmp_path / 'model_final.npz'
    config = numpy.frombuffer(_nested_json(100000), numpy.uint8)
    path.write_bytes(_npz_bytes(W=numpy.zeros((2, 3), numpy.float32),
                                b=numpy.zeros(2, numpy.float32),
                                **{trained_model.MODEL_CONFIG_KEY: config}))
    for read in (trained_model.read_model_config,
                 lambda path: zoo.load_weights(links.Linear(3, 2), path)):
        with pytest.raises(errors.CorruptFileError) as info:
            read(path)
        assert str(path) in str(info.value)
        assert trained_model.MODEL_CONFIG_KEY in str(info.value)


def test_a_mirror_manifest_nested_100000_deep_is_named(tmp_path):
    from cvzoo.models.weights import weight_files

    manifest = tmp_path / weight_files.MANIFEST_NAME
    manifest.write_bytes(_nested_json(100000))
    with pytest.raises(errors.CorruptFileError) as info:
        weight_files.fill_mirror(tmp_path, [])
    assert str(manifest) in str(info.value)
