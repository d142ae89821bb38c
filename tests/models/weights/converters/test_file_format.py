"""Tests of weight-format sniffing and the generic weight-file reader."""

import struct
import zipfile

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.weights.converters import file_format
from tests.helpers import pth_writer

ARRAY = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)


def _torch_zip(path):
    t = pth_writer.tensor('0', ARRAY)
    pth_writer.write_zip(path, {'conv/W': t}, [t])


def _torch_legacy(path):
    t = pth_writer.tensor('0', ARRAY)
    pth_writer.write_legacy(path, {'conv/W': t}, [t])


def _npz(path):
    with open(path, 'wb') as file:
        numpy.savez(file, **{'conv/W': ARRAY})


def _npz_compressed(path):
    with open(path, 'wb') as file:
        numpy.savez_compressed(file, **{'conv/W': ARRAY})


def _hdf5(path, userblock_size=0):
    h5py = pytest.importorskip('h5py')
    with h5py.File(path, 'w', userblock_size=userblock_size) as file:
        file.create_dataset('conv/W', data=ARRAY)


def _hdf5_userblock(path):
    _hdf5(path, userblock_size=512)


def _darknet(path):
    path.write_bytes(struct.pack('<3iq', 0, 2, 5, 100) + ARRAY.astype('<f4').tobytes())


def _darknet_old(path):
    path.write_bytes(struct.pack('<4i', 0, 1, 0, 100) + ARRAY.astype('<f4').tobytes())


WRITERS = {
    'torch_zip': (_torch_zip, 'torch_zip'), 'torch_legacy': (_torch_legacy, 'torch_legacy'),
    'npz': (_npz, 'npz'), 'npz_compressed': (_npz_compressed, 'npz'),
    'hdf5': (_hdf5, 'hdf5'), 'hdf5_userblock': (_hdf5_userblock, 'hdf5'),
    'darknet': (_darknet, 'darknet_weights'),
    'darknet_int32_seen': (_darknet_old, 'darknet_weights'),
}


@pytest.mark.parametrize('case', list(WRITERS), ids=list(WRITERS))
def test_sniff_and_read(tmp_path, case):
    write, expected = WRITERS[case]
    path = tmp_path / 'weights.bin'  # the suffix must not matter
    write(path)
    assert file_format.sniff_format(path) == expected
    arrays = file_format.read_weight_file(path)
    if expected == 'darknet_weights':
        assert arrays['header'][:3].tolist() in ([0, 2, 5], [0, 1, 0])
        numpy.testing.assert_array_equal(arrays['values'], ARRAY.ravel())
    else:
        numpy.testing.assert_array_equal(arrays['conv/W'], ARRAY)
    assert file_format.read_weight_file(path, expected).keys() == arrays.keys()


def _other_zip(path):
    with zipfile.ZipFile(path, 'w') as archive:
        archive.writestr('readme.txt', 'hello')


NOT_WEIGHTS = {
    'empty': lambda path: path.write_bytes(b''),
    'text': lambda path: path.write_text('just some text that is long enough to be read\n' * 3),
    'darknet_cfg': lambda path: path.write_text('[net]\nwidth=320\nheight=320\n' * 3),
    'float_remainder': lambda path: path.write_bytes(struct.pack('<3iq', 0, 2, 5, 0) + b'\0' * 6),
    'header_only': lambda path: path.write_bytes(struct.pack('<3iq', 0, 2, 5, 0)),
    'other_zip': _other_zip,
    'broken_zip': lambda path: path.write_bytes(b'PK\x03\x04' + b'\0' * 40),
}


@pytest.mark.parametrize('case', list(NOT_WEIGHTS), ids=list(NOT_WEIGHTS))
def test_unknown_formats_name_the_file(tmp_path, case):
    path = tmp_path / 'mystery.pth'
    NOT_WEIGHTS[case](path)
    with pytest.raises(errors.CorruptFileError, match='mystery.pth'):
        file_format.sniff_format(path)


def test_missing_file_and_bad_format_argument(tmp_path):
    with pytest.raises(FileNotFoundError):
        file_format.sniff_format(tmp_path / 'absent.pth')
    _npz(tmp_path / 'x.npz')
    with pytest.raises(ValueError, match="file_format: .*'keras'"):
        file_format.read_weight_file(tmp_path / 'x.npz', 'keras')


REAL = {
    'espnet_p_2_q_8_camvid.pth': 'torch_legacy', 'squeezenet1_1_deepscale.pth': 'torch_zip',
    'yolo-fastest-voc.weights': 'darknet_weights', 'yolo-fastest-xl-voc.weights':
    'darknet_weights', 'yolo-fastest-1.1-coco.weights': 'darknet_weights',
}


@pytest.mark.parametrize('name', list(REAL), ids=list(REAL))
def test_real_files(shared_data, name):
    assert file_format.sniff_format(shared_data / 'weights' / name) == REAL[name]


def test_real_cfg_is_not_weights(shared_data):
    with pytest.raises(errors.CorruptFileError, match='yolo-fastest-voc.cfg'):
        file_format.sniff_format(shared_data / 'weights' / 'yolo-fastest-voc.cfg')


def _zip_weight_file(path, kind):
    arrays = {'w': numpy.arange(4096, dtype=numpy.float32).reshape(64, 64)}
    if kind == 'npz':
        numpy.savez(path, **arrays)
    else:
        t = pth_writer.tensor('0', arrays['w'])
        pth_writer.write_zip(path, {'w': t}, [t])


@pytest.mark.parametrize('cut', [0.1, 0.5, 0.9, 0.999], ids=['10%', '50%', '90%', '99.9%'])
@pytest.mark.parametrize('kind', ['npz', 'pth'])
def test_truncated_zip_weight_file_names_the_file(tmp_path, kind, cut):
    from cvzoo.core.links import link
    from cvzoo.models import zoo

    path = tmp_path / f'cut.{kind}'
    _zip_weight_file(path, kind)
    data = path.read_bytes()
    path.write_bytes(data[:max(int(len(data) * cut), 4)])
    with pytest.raises(errors.CorruptFileError, match=f'cut.{kind}'):
        file_format.read_weight_file(path)
    with pytest.raises(errors.CorruptFileError, match=f'cut.{kind}'):
        zoo.load_weights(link.Chain(), path)
