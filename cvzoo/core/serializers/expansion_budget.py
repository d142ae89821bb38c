"""ExpansionBudget: how many bytes of arrays one weight file may be read into.

A weight file declares what it holds before the bytes come: a tensor's shape and
strides, a zip member's uncompressed size, an ``.npy`` header's shape, an HDF5
dataset's shape. A small hostile file can declare a huge array (a tensor of stride 0
broadcast from one element, a deflated member of zeros, an HDF5 dataset with no stored
data), so every reader asks this budget before it allocates:

    the arrays read from one file may take at most
    max(MAX_EXPANSION * file size, EXPANSION_FLOOR) bytes in all.

Real weight files stay far below it: PyTorch stores its tensors uncompressed, and
float weights deflate by a few percent, so their arrays take about the file's size
(twice, counting storages and the tensors copied out of them). The floor leaves room for
small files that legitimately expand: a zero-initialised layer in a compressed ``.npz``,
an expanded (stride 0) buffer.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), 'tiny.npz')
>>> with open(path, 'wb') as handle:
...     _ = handle.write(b'0' * 100)
>>> budget = ExpansionBudget(path)
>>> budget.spend(4 * 10 ** 6, "member 'W'")
>>> budget.spend(2 ** 40, "member 'b'")
Traceback (most recent call last):
...
cvzoo.errors.CorruptFileError: ...: member 'b' declares 1099511627776 bytes, ...
"""

import os

from cvzoo import errors

# Deflate reaches about 1000x only on constant data; weights never come near 64x.
MAX_EXPANSION = 64
EXPANSION_FLOOR = 1 << 28  # 256 MiB


def file_size(file) -> int:
    """The size in bytes of a path or of an open, seekable binary file."""
    if isinstance(file, (str, os.PathLike)):
        return os.path.getsize(file)
    position = file.tell()
    try:
        return file.seek(0, os.SEEK_END)
    finally:
        file.seek(position)


class ExpansionBudget:
    """The bytes that the arrays of one weight file may still take.

    Args:
        file (str, os.PathLike or binary file): the weight file.
        name (str or None): how messages name the file (default: the path).

    Attributes:
        size (int): the file's size in bytes.
        limit (int): ``max(MAX_EXPANSION * size, EXPANSION_FLOOR)``.
        spent (int): bytes granted so far.
    """

    def __init__(self, file, name=None):
        self.name = name if name is not None else os.fspath(file)
        self.size = file_size(file)
        self.limit = max(MAX_EXPANSION * self.size, EXPANSION_FLOOR)
        self.spent = 0

    def spend(self, n_byte, what) -> None:
        """Grant ``n_byte`` more bytes to ``what`` (e.g. "tensor 'fc.weight'"), or refuse.

        Raises:
            cvzoo.errors.CorruptFileError: ``n_byte`` is negative or would exceed the
                limit; the message names the file, ``what`` and the sizes.
        """
        if n_byte < 0:
            raise errors.CorruptFileError(f'{self.name}: {what} declares {n_byte} bytes')
        if self.spent + n_byte > self.limit:
            raise errors.CorruptFileError(
                f'{self.name}: {what} declares {n_byte} bytes, more than a {self.size}-byte '
                f'file may expand to ({self.limit} bytes in all: {MAX_EXPANSION} times its '
                f'size, at least {EXPANSION_FLOOR}; {self.spent} already read); the file is '
                'corrupt or hostile')
        self.spent += n_byte
