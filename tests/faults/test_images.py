"""Bad image files and image arguments: each is refused with the right class, naming the
file or argument; images that are odd but valid are read right."""

import io
import os
import struct
import zlib

import numpy
import pytest
from PIL import Image

from cvzoo import errors
from cvzoo.utils.image import as_chw_image, read_image, read_label, write_image

ODD_NAME = "a b [1] ü 日本 %20 $(touch x) ;'.png"


def _chunk(kind, data):
    return (struct.pack('>I', len(data)) + kind + data
            + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff))


def _png(W, H, rows, bit_depth=8, color_type=0):
    """A PNG written chunk by chunk: IHDR as given, one IDAT of ``rows`` (filter bytes
    included), IEND."""
    header = struct.pack('>IIBBBBB', W, H, bit_depth, color_type, 0, 0, 0)
    return (b'\x89PNG\r\n\x1a\n' + _chunk(b'IHDR', header)
            + _chunk(b'IDAT', zlib.compress(rows)) + _chunk(b'IEND', b''))


def _encoded(fmt, mode='RGB', H=48, W=40):
    rng = numpy.random.default_rng(0)
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (H, W, 3), dtype=numpy.uint8)).convert(mode).save(
        buffer, fmt)
    return buffer.getvalue()


def _flip_byte(data, index):
    data = bytearray(data)
    data[index] ^= 0xFF
    return bytes(data)


def _write(content):
    def write(path):
        path.write_bytes(content() if callable(content) else content)
    return write


# case: (file name, how to make it, expected error, reader)
BAD_FILES = {
    'zero_byte_jpg': ('x.jpg', _write(b''), errors.CorruptFileError, read_image),
    'zero_byte_png_label': ('x.png', _write(b''), errors.CorruptFileError, read_label),
    'truncated_jpeg_30%': ('x.jpg', _write(lambda: _encoded('JPEG')[:600]),
                           errors.CorruptFileError, read_image),
    'truncated_jpeg_header_only': ('x.jpg', _write(b'\xff\xd8'), errors.CorruptFileError,
                                   read_image),
    'truncated_png_half': ('x.png', _write(lambda: _encoded('PNG')[:3000]),
                           errors.CorruptFileError, read_image),
    'png_bad_crc': ('x.png', _write(lambda: _flip_byte(_encoded('PNG'), 29)),
                    errors.CorruptFileError, read_image),
    'text_named_jpg': ('x.jpg', _write(b'hello, I am not a picture\n' * 10),
                       errors.CorruptFileError, read_image),
    'html_error_page_named_png': ('x.png', _write(b'<html><body>404 Not Found</body></html>'),
                                  errors.CorruptFileError, read_image),
    'decompression_bomb_header': ('x.png', _write(_png(100_000, 100_000, b'\0' * 100)),
                                  errors.CorruptFileError, read_image),
    'bomb_header_under_twice_the_limit': ('x.png', _write(_png(12_000, 12_000, b'\0' * 100)),
                                          errors.CorruptFileError, read_image),
    'directory_named_jpg': ('x.jpg', lambda path: path.mkdir(), IsADirectoryError, read_image),
    'fifo_named_jpg': ('x.jpg', lambda path: os.mkfifo(path), errors.CorruptFileError,
                       read_image),
    'missing': ('x.jpg', lambda path: None, errors.MissingFileError, read_image),
    'missing_odd_characters': (ODD_NAME, lambda path: None, errors.MissingFileError,
                               read_image),
    'missing_label': ('x.png', lambda path: None, errors.MissingFileError, read_label),
    'colour_label': ('x.png', _write(lambda: _encoded('PNG')), errors.CorruptFileError,
                     read_label),
}


@pytest.mark.filterwarnings('ignore::PIL.Image.DecompressionBombWarning')
@pytest.mark.parametrize('case', list(BAD_FILES), ids=list(BAD_FILES))
def test_bad_image_file_is_named(tmp_path, case):
    name, make, error, reader = BAD_FILES[case]
    path = tmp_path / name
    make(path)
    with pytest.raises(error) as info:
        reader(path)
    assert type(info.value) is error
    assert name in str(info.value)


def test_short_png_data_is_not_read_as_black(tmp_path):
    """The IDAT stream of this PNG ends after half the rows; Pillow fills the rest."""
    rows = b''.join(b'\0' + bytes([200]) * 12 for _ in range(4))
    (tmp_path / 'short.png').write_bytes(_png(4, 8, rows, color_type=2))
    with pytest.raises(errors.CorruptFileError, match='short.png'):
        read_image(tmp_path / 'short.png')


def _grey16(path):
    path.write_bytes(_png(3, 1, b'\0' + struct.pack('>3H', 0, 257, 65535), bit_depth=16))
    return [[0, 1, 255]] * 3


def _rgb48(path):
    row = b'\0' + struct.pack('>6H', 65535, 0, 257, 0, 65535, 32896)
    path.write_bytes(_png(2, 1, row, bit_depth=16, color_type=2))
    return [[255, 0], [0, 255], [1, 128]]


def _palette(path):
    pil_img = Image.fromarray(numpy.array([[0, 1, 2]], numpy.uint8), mode='P')
    pil_img.putpalette([10, 20, 30, 40, 50, 60, 70, 80, 90] + [0] * 759)
    pil_img.save(path)
    return [[10, 40, 70], [20, 50, 80], [30, 60, 90]]


def _grey(path):
    Image.fromarray(numpy.array([[0, 7, 255]], numpy.uint8)).save(path)
    return [[0, 7, 255]] * 3


def _cmyk_jpeg(path):
    pil_img = Image.new('CMYK', (8, 8), (0, 255, 255, 0))  # pure red in CMYK
    pil_img.save(path, quality=100)
    return None  # checked approximately below


def _odd_name(path):
    Image.fromarray(numpy.full((1, 3, 3), 9, numpy.uint8)).save(path)
    return [[9, 9, 9]] * 3


# case: (file name, writer returning the expected first row of each channel)
ODD_BUT_VALID = {
    '16_bit_grey_png': ('x.png', _grey16),
    '16_bit_rgb_png': ('x.png', _rgb48),
    'palette_png': ('x.png', _palette),
    'grey_png': ('x.png', _grey),
    'cmyk_jpeg': ('x.jpg', _cmyk_jpeg),
    'odd_characters_in_path': (ODD_NAME, _odd_name),
}


@pytest.mark.parametrize('case', list(ODD_BUT_VALID), ids=list(ODD_BUT_VALID))
def test_odd_but_valid_image_is_read_right(tmp_path, case):
    name, write = ODD_BUT_VALID[case]
    expected = write(tmp_path / name)
    img = read_image(tmp_path / name)
    assert img.dtype == numpy.float32 and img.shape[0] == 3
    if expected is None:  # CMYK red: about (255, 0, 0) after the JPEG round trip
        numpy.testing.assert_allclose(img.mean(axis=(1, 2)), [255, 0, 0], atol=3)
    else:
        numpy.testing.assert_allclose(img[:, 0], expected, atol=0.01)


# case: (call, expected error, the argument the message names)
BAD_ARGUMENTS = {
    'read_image_int_path': (lambda tmp: read_image(42), TypeError, 'path'),
    'read_image_none_path': (lambda tmp: read_image(None), TypeError, 'path'),
    'as_chw_none': (lambda tmp: as_chw_image(None), TypeError, 'img'),
    'as_chw_bytes': (lambda tmp: as_chw_image(b'\x89PNG'), TypeError, 'img'),
    'as_chw_1d': (lambda tmp: as_chw_image(numpy.zeros(5)), ValueError, 'img'),
    'as_chw_4d': (lambda tmp: as_chw_image(numpy.zeros((1, 3, 4, 4))), ValueError, 'img'),
    'as_chw_five_channels': (lambda tmp: as_chw_image(numpy.zeros((5, 4, 4))), ValueError,
                             'img'),
    'as_chw_uint8_two_channels': (lambda tmp: as_chw_image(numpy.zeros((4, 4, 2), numpy.uint8)),
                                  ValueError, 'img'),
    'write_image_4d': (lambda tmp: write_image(numpy.zeros((1, 3, 2, 2)), tmp / 'w.png'),
                       ValueError, 'img'),
    'write_image_unknown_extension': (lambda tmp: write_image(numpy.zeros((3, 2, 2)),
                                                              tmp / 'w.xyz'),
                                      errors.UsageError, 'w.xyz'),
    'write_image_missing_folder': (lambda tmp: write_image(numpy.zeros((3, 2, 2)),
                                                           tmp / 'absent' / 'w.png'),
                                   errors.MissingFileError, 'absent'),
    'write_image_onto_a_folder': (lambda tmp: write_image(numpy.zeros((3, 2, 2)),
                                                          tmp / 'folder.png'),
                                  IsADirectoryError, 'folder.png'),
}


@pytest.mark.parametrize('case', list(BAD_ARGUMENTS), ids=list(BAD_ARGUMENTS))
def test_bad_image_argument_is_named(tmp_path, case):
    call, error, named = BAD_ARGUMENTS[case]
    (tmp_path / 'folder.png').mkdir()
    with pytest.raises(error) as info:
        call(tmp_path)
    assert type(info.value) is error
    assert named in str(info.value)
    # write_image leaves no temporary file behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ['folder.png']
