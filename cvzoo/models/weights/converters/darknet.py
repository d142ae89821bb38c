"""Read Darknet files: the ``.cfg`` network description and the ``.weights`` binary.

A ``.weights`` file is a header (int32 major, minor, revision, then ``seen``: an int64
when ``major * 10 + minor >= 2`` and both are below 1000, else an int32) followed by
little-endian float32 values, convolution after convolution in cfg order, nothing for
the other layers. Per convolution: bias[n], then (with batch_normalize) scale[n],
rolling_mean[n], rolling_variance[n], then the weights (n, c / groups, size, size).
The file holds no names, so the model built from the cfg asks for the values in order.

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, 'tiny.cfg'), 'w') as handle:
...     _ = handle.write('[net]\\nwidth=32\\nheight=32\\n\\n[convolutional]\\nfilters=8\\n')
>>> parse_darknet_cfg(os.path.join(folder, 'tiny.cfg'))
[('net', {'width': '32', 'height': '32'}), ('convolutional', {'filters': '8'})]
>>> with open(os.path.join(folder, 'tiny.weights'), 'wb') as handle:
...     _ = handle.write(struct.pack('<iiiq', 0, 2, 0, 0))  # version 0.2.0, seen 0
...     _ = handle.write(numpy.arange(8, dtype='<f4').tobytes())
>>> with DarknetWeightsReader(os.path.join(folder, 'tiny.weights')) as reader:
...     bias = reader.read(8)
>>> bias
array([0., 1., 2., 3., 4., 5., 6., 7.], dtype=float32)
"""

import os
import struct

import numpy

from cvzoo import errors

_NET_SECTIONS = ('net', 'network')


def _parse_line(line, path, line_number, sections):
    """Add one stripped, non-comment cfg line to ``sections``."""
    if line.startswith('['):
        if not line.endswith(']') or len(line) < 3:
            raise errors.CorruptFileError(
                f'{path}, line {line_number}: malformed section header {line!r}')
        sections.append((line[1:-1].strip(), {}))
        return
    if not sections:
        raise errors.CorruptFileError(
            f'{path}, line {line_number}: {line!r} comes before the first [section]')
    key, sep, value = line.partition('=')
    if not sep or not key.strip():
        raise errors.CorruptFileError(
            f'{path}, line {line_number}: expected key=value, got {line!r}')
    sections[-1][1][key.strip()] = value.strip()


def parse_darknet_cfg(path) -> list:
    """Read a Darknet ``.cfg`` into its sections, in file order.

    Lines starting with ``#`` or ``;`` and blank lines are skipped. A section may repeat
    (``[convolutional]`` does); a key repeated inside one section keeps its last value,
    as Darknet does. Values stay strings (``anchors``, ``mask``, ``layers`` are lists
    written as ``'10,14,  23,27'``); the model builder interprets them.

    Args:
        path (str or os.PathLike): the ``.cfg`` file.

    Returns:
        list of (str, dict): ``(section name, {key: value string})``; the first section
        is ``[net]`` (or ``[network]``).

    Raises:
        cvzoo.errors.CorruptFileError: a malformed line, or the file does not start with
            ``[net]``; the message names the file and the line.
    """
    path = os.fspath(path)
    sections = []
    with open(path, encoding='utf-8', errors='replace') as file:
        for line_number, line in enumerate(file, start=1):
            line = line.strip()
            if line and line[0] not in '#;':
                _parse_line(line, path, line_number, sections)
    if not sections or sections[0][0] not in _NET_SECTIONS:
        first = sections[0][0] if sections else 'nothing'
        raise errors.CorruptFileError(
            f'{path}: a Darknet cfg must start with [net], it starts with {first!r}')
    return sections


class DarknetWeightsReader:
    """Stream the float32 values of a Darknet ``.weights`` file, in order.

    Args:
        path (str or os.PathLike): the ``.weights`` file.

    Attributes:
        major, minor, revision (int): the version in the header.
        seen (int): the number of images the network was trained on.
        transpose (bool): True when major or minor exceeds 1000, which Darknet uses to
            mark fully-connected weights stored transposed.
        header_size (int): 16 or 20 bytes.
        n_value (int): float32 values after the header.
        position (int): values read so far.

    Raises:
        cvzoo.errors.CorruptFileError: the header is incomplete or the data is not a
            whole number of float32 values.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self._file = open(self.path, 'rb')  # noqa: SIM115 - the reader streams it until close()
        try:
            self._read_header()
        except BaseException:
            self._file.close()
            raise
        self.position = 0

    def _read_header(self):
        size = os.fstat(self._file.fileno()).st_size
        head = self._file.read(12)
        if len(head) < 12:
            raise errors.CorruptFileError(
                f'{self.path}: {size} bytes is too short for a Darknet weights header')
        self.major, self.minor, self.revision = struct.unpack('<3i', head)
        wide_seen = self.major * 10 + self.minor >= 2 and self.major < 1000 and self.minor < 1000
        seen_format = '<q' if wide_seen else '<i'
        raw = self._file.read(struct.calcsize(seen_format))
        if len(raw) < struct.calcsize(seen_format):
            raise errors.CorruptFileError(f'{self.path}: the header ends early (truncated?)')
        self.seen, = struct.unpack(seen_format, raw)
        self.transpose = self.major > 1000 or self.minor > 1000
        self.header_size = 12 + len(raw)
        n_byte = size - self.header_size
        if n_byte % 4:
            raise errors.CorruptFileError(
                f'{self.path}: {n_byte} bytes after the header are not whole float32 values')
        self.n_value = n_byte // 4

    def read(self, n: int) -> numpy.ndarray:
        """Return the next ``n`` values as a new float32 array of shape (n,).

        Raises:
            ValueError: ``n`` is negative.
            cvzoo.errors.CorruptFileError: fewer than ``n`` values are left; the message
                names the file, the position and both counts.
        """
        n = int(n)
        if n < 0:
            raise ValueError(f'n: expected a count >= 0, got {n}')
        remaining = self.n_value - self.position
        if n > remaining:
            raise errors.CorruptFileError(
                f'{self.path}: the model asks for {n} more values at value {self.position}, '
                f'but only {remaining} are left (the file holds {self.n_value}); the cfg '
                'does not match these weights')
        raw = self._file.read(4 * n)
        self.position += n
        return numpy.frombuffer(raw, dtype='<f4').astype(numpy.float32)

    def check_consumed(self) -> None:
        """Raise when values are left over after the model took what it needed.

        Raises:
            cvzoo.errors.CorruptFileError: naming the file and both counts.
        """
        if self.position != self.n_value:
            raise errors.CorruptFileError(
                f'{self.path}: the model read {self.position} values but the file holds '
                f'{self.n_value}; the cfg does not match these weights')

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def read_darknet_weights(path, shapes) -> list:
    """Read a whole ``.weights`` file as arrays of the given shapes, in order.

    Args:
        path (str or os.PathLike): the ``.weights`` file.
        shapes (iterable of tuple of int): one shape per block the model expects, in
            file order (e.g. bias, scale, mean, variance, W of each convolution).

    Returns:
        list of numpy.ndarray: float32 arrays of those shapes.

    Raises:
        cvzoo.errors.CorruptFileError: the file holds fewer or more values than the
            shapes add up to.
    """
    with DarknetWeightsReader(path) as reader:
        arrays = [reader.read(numpy.prod(shape, dtype=numpy.int64)).reshape(shape)
                  for shape in shapes]
        reader.check_consumed()
    return arrays


def read_darknet_raw(path) -> dict:
    """Read a ``.weights`` file into a dict, for the zoo's generic loading path.

    Returns:
        dict: ``'header'`` int64 (4,) (major, minor, revision, seen) and ``'values'``
        float32 (n_value,), everything after the header.
    """
    with DarknetWeightsReader(path) as reader:
        header = numpy.array([reader.major, reader.minor, reader.revision, reader.seen],
                             dtype=numpy.int64)
        return {'header': header, 'values': reader.read(reader.n_value)}
