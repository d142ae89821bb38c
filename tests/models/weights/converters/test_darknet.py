"""Tests of the Darknet cfg parser and the .weights reader."""

import struct

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.weights.converters import darknet

CFG = """\
# a comment
[net]
width=32
 height = 32
channels=3

; another comment style
[convolutional]
batch_normalize=1
filters=4
size=3
stride=1
pad=1
activation=leaky

[convolutional]
filters=6
size=1
activation=linear

[route]
layers = -1, 0

[yolo]
mask = 0,1,2
anchors = 10,14,  23,27,  37,58
classes=1
"""


def test_parse_cfg_sections_in_order(tmp_path):
    path = tmp_path / 'net.cfg'
    path.write_text(CFG)
    sections = darknet.parse_darknet_cfg(path)
    assert [name for name, _ in sections] == [
        'net', 'convolutional', 'convolutional', 'route', 'yolo']
    assert sections[0][1] == {'width': '32', 'height': '32', 'channels': '3'}
    assert sections[1][1]['filters'] == '4' and sections[2][1]['filters'] == '6'
    assert sections[3][1] == {'layers': '-1, 0'}
    assert sections[4][1]['anchors'] == '10,14,  23,27,  37,58'
    assert sections[4][1]['mask'] == '0,1,2'


def test_parse_cfg_network_alias_and_crlf(tmp_path):
    path = tmp_path / 'net.cfg'
    path.write_bytes(b'[network]\r\nwidth=8\r\n[maxpool]\r\nsize=2\r\n')
    assert darknet.parse_darknet_cfg(path) == [('network', {'width': '8'}),
                                               ('maxpool', {'size': '2'})]


@pytest.mark.parametrize('text, message', [
    ('width=3\n[net]\n', 'before the first'),
    ('[convolutional]\nfilters=3\n', 'start with \\[net\\]'),
    ('[net]\nwidth\n', 'line 2.*key=value'),
    ('[net\nwidth=3\n', 'line 1.*malformed'),
    ('# only a comment\n', 'starts with .nothing'),
], ids=['key_before_section', 'no_net_first', 'no_equals', 'bad_header', 'empty'])
def test_parse_cfg_errors_name_the_file(tmp_path, text, message):
    path = tmp_path / 'bad.cfg'
    path.write_text(text)
    with pytest.raises(errors.CorruptFileError, match='bad.cfg.*' + message):
        darknet.parse_darknet_cfg(path)


def _write_weights(path, values, version=(0, 2, 5), seen=64000):
    wide = version[0] * 10 + version[1] >= 2 and version[0] < 1000 and version[1] < 1000
    header = struct.pack('<3i', *version) + struct.pack('<q' if wide else '<i', seen)
    path.write_bytes(header + numpy.asarray(values, '<f4').tobytes())


@pytest.mark.parametrize('version, header_size', [
    ((0, 2, 5), 20), ((0, 1, 0), 16), ((1, 0, 0), 20), ((0, 0, 0), 16), ((1000, 2, 0), 16),
], ids=['v0.2_int64_seen', 'v0.1_int32_seen', 'v1.0', 'v0.0', 'major_1000'])
def test_header_versions(tmp_path, version, header_size):
    path = tmp_path / 'x.weights'
    _write_weights(path, numpy.arange(10), version=version, seen=123)
    with darknet.DarknetWeightsReader(path) as reader:
        assert (reader.major, reader.minor, reader.revision) == version
        assert reader.seen == 123 and reader.header_size == header_size
        assert reader.n_value == 10
        assert reader.transpose == (version[0] > 1000)


def test_read_in_order_and_check_consumed(tmp_path):
    path = tmp_path / 'x.weights'
    values = numpy.arange(20, dtype=numpy.float32) * 0.5
    _write_weights(path, values)
    with darknet.DarknetWeightsReader(path) as reader:
        first = reader.read(8)
        assert first.dtype == numpy.float32 and first.flags.writeable
        numpy.testing.assert_array_equal(first, values[:8])
        with pytest.raises(errors.CorruptFileError, match='x.weights.*read 8 values.*holds 20'):
            reader.check_consumed()
        numpy.testing.assert_array_equal(reader.read(12), values[8:])
        assert reader.read(0).shape == (0,)
        reader.check_consumed()
        with pytest.raises(errors.CorruptFileError, match='x.weights.*1 more values'):
            reader.read(1)


def test_read_darknet_weights_shapes(tmp_path):
    path = tmp_path / 'x.weights'
    values = numpy.arange(4 + 4 * 3 * 3 * 3, dtype=numpy.float32)
    _write_weights(path, values)
    bias, W = darknet.read_darknet_weights(path, [(4,), (4, 3, 3, 3)])
    numpy.testing.assert_array_equal(bias, values[:4])
    numpy.testing.assert_array_equal(W, values[4:].reshape(4, 3, 3, 3))
    with pytest.raises(errors.CorruptFileError, match='holds 112'):
        darknet.read_darknet_weights(path, [(4,), (4, 3, 3, 2)])
    with pytest.raises(errors.CorruptFileError, match='only 0 are left'):
        darknet.read_darknet_weights(path, [(4,), (4, 3, 3, 3), (1,)])
    raw = darknet.read_darknet_raw(path)
    assert raw['header'].tolist() == [0, 2, 5, 64000]
    numpy.testing.assert_array_equal(raw['values'], values)


@pytest.mark.parametrize('content', [b'', b'\0' * 11, struct.pack('<3i', 0, 2, 0) + b'\0' * 4,
                                     struct.pack('<3iq', 0, 2, 0, 0) + b'\0' * 6],
                         ids=['empty', 'short_version', 'short_seen', 'partial_float'])
def test_corrupt_header_names_the_file(tmp_path, content):
    path = tmp_path / 'bad.weights'
    path.write_bytes(content)
    with pytest.raises(errors.CorruptFileError, match='bad.weights'):
        darknet.DarknetWeightsReader(path)


def test_negative_count(tmp_path):
    path = tmp_path / 'x.weights'
    _write_weights(path, [1.0])
    with darknet.DarknetWeightsReader(path) as reader, pytest.raises(ValueError, match='n:'):
        reader.read(-1)


def _conv_value_counts(sections):
    """Float counts of each convolution, found by walking the channels through the cfg."""
    channels, counts = [], []
    previous = int(sections[0][1].get('channels', 3))
    for index, (name, options) in enumerate(sections[1:]):
        if name == 'convolutional':
            n, size = int(options['filters']), int(options['size'])
            groups = int(options.get('groups', 1))
            per_filter = 4 if options.get('batch_normalize') == '1' else 1
            counts.append(n * per_filter + n * (previous // groups) * size * size)
            previous = n
        elif name == 'route':
            layers = [int(v) for v in options['layers'].split(',')]
            previous = sum(channels[v if v >= 0 else index + v] for v in layers)
        channels.append(previous)
    return counts


REAL = {
    'yolo-fastest-voc': (315726, 85), 'yolo-fastest-xl-voc': (872006, 85),
    'yolo-fastest-1.1-coco': (346062, 84),
}


@pytest.mark.parametrize('name', list(REAL), ids=list(REAL))
def test_real_yolo_fastest_files(shared_data, name):
    n_value, n_conv = REAL[name]
    sections = darknet.parse_darknet_cfg(shared_data / 'weights' / f'{name}.cfg')
    assert sections[0][0] == 'net' and sections[0][1]['width'] == '320'
    counts = _conv_value_counts(sections)
    assert len(counts) == n_conv and sum(counts) == n_value
    with darknet.DarknetWeightsReader(shared_data / 'weights' / f'{name}.weights') as reader:
        assert (reader.major, reader.minor, reader.revision) == (0, 2, 5)
        assert reader.header_size == 20 and reader.n_value == n_value
        for count in counts:
            assert numpy.isfinite(reader.read(count)).all()
        reader.check_consumed()
