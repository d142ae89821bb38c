"""Read and write images and label maps with Pillow, in cvzoo's CHW float32 RGB layout.

DESIGN.md: an image is a (3, H, W) float32 array, RGB, values in [0, 255]; a semantic
label is an (H, W) int32 array. Every reading function names the file in its error
when the file is missing (MissingFileError, a FileNotFoundError) or is not a readable image
(cvzoo.errors.CorruptFileError).

Pillow is imported on first use, so that importing a model (and listing the zoo) does not
load it.
"""

from __future__ import annotations

import os
import pathlib
import secrets
import struct
import sys
import zlib
from typing import TYPE_CHECKING, Union

import numpy

from cvzoo import errors
from cvzoo.core import backend

if TYPE_CHECKING:
    from PIL import Image

PathLike = Union[str, os.PathLike]

# Modes holding more than 8 bits of grey; read_image scales them into [0, 255].
_WIDE_GREY_MODES = ('I', 'I;16', 'I;16B', 'I;16L', 'I;16N')


def _open(path: PathLike) -> Image.Image:
    """Open and fully decode ``path``; errors name the file."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f'path: expected a str or os.PathLike, got {type(path).__name__}')
    path = os.fspath(path)
    if not os.path.exists(path):
        raise errors.MissingFileError(f'{path}: image file not found')
    if not os.path.isfile(path) and not os.path.isdir(path):
        # NOTE: a FIFO or a device would block or never end in Image.open.
        raise errors.CorruptFileError(f'{path}: not a regular file (a pipe or a device?)')
    from PIL import Image

    try:
        pil_img = Image.open(path)
        pil_img.load()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        if isinstance(exc, (FileNotFoundError, IsADirectoryError, PermissionError)):
            raise
        raise errors.CorruptFileError(
            f'{path}: not a readable image (truncated or corrupt): {exc}') from exc
    if pil_img.format == 'PNG' and not _last_row(pil_img).any():
        _check_png_rows(path)  # missing rows read as zeros: only then worth a look
    return pil_img


def _last_row(pil_img):
    width, height = pil_img.size
    return numpy.asarray(pil_img.crop((0, height - 1, width, height)))


_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # by colour type


def _check_png_rows(path):
    """Refuse a PNG whose image data holds fewer rows than its header says.

    Pillow stops at the end of the zlib stream and fills missing rows with zeros, so a
    PNG cut inside its data, then closed properly, reads as an image with a black band.
    Interlaced and animated PNGs are not checked.
    """
    with open(path, 'rb') as file:
        data = file.read()
    chunks, offset = {}, 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack('>I4s', data[offset:offset + 8])
        chunks.setdefault(kind, []).append(data[offset + 8:offset + 8 + length])
        offset += 12 + length
    header = chunks.get(b'IHDR', [b''])[0]
    if len(header) != 13 or b'acTL' in chunks:
        return
    width, height, bit_depth, color_type, _, _, interlace = struct.unpack('>IIBBBBB', header)
    if interlace or color_type not in _PNG_CHANNELS:
        return
    row_bytes = 1 + (width * bit_depth * _PNG_CHANNELS[color_type] + 7) // 8
    expected = height * row_bytes
    try:
        size = len(zlib.decompressobj().decompress(b''.join(chunks.get(b'IDAT', [])),
                                                   expected + 1))
    except zlib.error:
        return  # Pillow read it; its own decoder is the judge of the stream itself
    if size < expected:
        raise errors.CorruptFileError(
            f'{path}: truncated PNG: its image data holds {size // row_bytes} of '
            f'{height} rows')


def _wide_grey_to_8bit(pil_img: Image.Image) -> numpy.ndarray:
    """A 16-bit grey image as an (H, W) float32 array scaled into [0, 255]."""
    array = numpy.asarray(pil_img).astype(numpy.float32)
    # NOTE: 65535 / 257 == 255, so full-range 16-bit data maps onto full-range 8-bit.
    return array / 257.0


def _pil_to_chw(pil_img: Image.Image, dtype, color: bool) -> numpy.ndarray:
    """Convert a decoded PIL image to (3, H, W) (or (1, H, W)) ``dtype`` in [0, 255]."""
    from PIL import ImageOps

    pil_img = ImageOps.exif_transpose(pil_img)
    if pil_img.mode in _WIDE_GREY_MODES:
        grey = _wide_grey_to_8bit(pil_img)
        channels = 3 if color else 1
        return numpy.ascontiguousarray(
            numpy.broadcast_to(grey, (channels,) + grey.shape)).astype(dtype)
    if pil_img.mode == 'F':
        grey = numpy.asarray(pil_img, dtype=numpy.float32)
        channels = 3 if color else 1
        return numpy.repeat(grey[None], channels, axis=0).astype(dtype)
    if pil_img.mode == 'PA' or (pil_img.mode == 'P' and 'transparency' in pil_img.info):
        pil_img = pil_img.convert('RGBA')  # palette with alpha: through RGBA, alpha dropped
    pil_img = pil_img.convert('RGB' if color else 'L')
    array = numpy.asarray(pil_img, dtype=dtype)
    if array.ndim == 2:
        return array[None].copy()
    return numpy.ascontiguousarray(array.transpose(2, 0, 1))


def read_image(path: PathLike, dtype=numpy.float32, color: bool = True) -> numpy.ndarray:
    """Read an image file into a CHW array, RGB, values in [0, 255].

    The EXIF Orientation tag is applied. Grayscale, palette, CMYK, RGBA (alpha dropped),
    LA and 16-bit grey images are turned into RGB (or into one grey channel with
    ``color=False``); 16-bit grey values are scaled by 1/257 into [0, 255].

    Args:
        path (str or Path): the image file.
        dtype: the output dtype, float32 by default.
        color (bool): True: (3, H, W) RGB; False: (1, H, W) luminance.

    Returns:
        array: (3, H, W) or (1, H, W) of ``dtype``.

    Raises:
        cvzoo.errors.MissingFileError: the file does not exist (a FileNotFoundError).
        cvzoo.errors.CorruptFileError: the file is truncated, corrupt or not an image, or
            a floating-point image (a float TIFF) holds NaN or inf.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), 'a.png')
    >>> write_image(numpy.zeros((3, 2, 4), numpy.float32), path)
    >>> read_image(path).shape
    (3, 2, 4)
    """
    pil_img = _open(path)
    try:
        if pil_img.mode == 'F' and not numpy.isfinite(numpy.asarray(pil_img)).all():
            raise errors.CorruptFileError(
                f'{path}: a floating-point image holding NaN or inf; expected finite values')
        return _pil_to_chw(pil_img, dtype, color)
    finally:
        pil_img.close()


def read_label(path: PathLike, dtype=numpy.int32) -> numpy.ndarray:
    """Read a one-channel label PNG into an (H, W) integer array.

    Palette images keep their palette indices (the class ids), not the colours. Grey
    images (8 or 16 bit) keep their values. Any conversion to ignore (-1) is the
    caller's (e.g. 255 -> -1 for VOC).

    Args:
        path (str or Path): the label file.
        dtype: the output dtype, int32 by default.

    Returns:
        array: (H, W) of ``dtype``.

    Raises:
        cvzoo.errors.MissingFileError: the file does not exist (a FileNotFoundError).
        cvzoo.errors.CorruptFileError: the file is corrupt, or has colour channels.
    """
    pil_img = _open(path)
    try:
        if pil_img.mode in ('LA', 'PA'):
            return numpy.asarray(pil_img)[:, :, 0].astype(dtype)
        if pil_img.mode not in ('P', 'L', '1', 'F') + _WIDE_GREY_MODES:
            raise errors.CorruptFileError(
                f'{os.fspath(path)}: a label image must have one channel (mode P, L or I), '
                f'got mode {pil_img.mode}')
        return numpy.asarray(pil_img).astype(dtype)
    finally:
        pil_img.close()


def _chw_to_pil(img) -> Image.Image:
    from PIL import Image

    img = backend.to_numpy(img)
    if not hasattr(img, 'ndim') or img.ndim != 3 or img.shape[0] not in (1, 3):
        raise ValueError(
            f'img: expected a (3, H, W) or (1, H, W) array, got shape {getattr(img, "shape", None)}')
    hwc = numpy.clip(numpy.rint(img), 0, 255).astype(numpy.uint8).transpose(1, 2, 0)
    if hwc.shape[2] == 1:
        return Image.fromarray(numpy.ascontiguousarray(hwc[:, :, 0]), mode='L')
    return Image.fromarray(numpy.ascontiguousarray(hwc), mode='RGB')


def write_image(img, path: PathLike) -> None:
    """Write a CHW image (values in [0, 255], rounded and clipped) to ``path`` atomically.

    The format comes from the file extension. The image is written to a temporary file
    in the same folder and renamed, so no half-written file is ever left at ``path``.

    Args:
        img (array): (3, H, W) RGB or (1, H, W) grey, any numeric dtype.
        path (str or Path): the destination; its folder must exist.
    """
    path = pathlib.Path(path)
    extension = path.suffix.lower()
    from PIL import Image

    image_format = Image.registered_extensions().get(extension)
    if image_format is None:
        raise errors.UsageError(
            f'path: expected a known image extension (.png, .jpg, ...), got {path}')
    pil_img = _chw_to_pil(img)
    if not path.parent.is_dir():
        raise errors.MissingFileError(
            f'path: the folder to write into does not exist: {str(path)!r}')
    # NOTE: not cvzoo.core's atomic_write (utils does not import core); 'x' creates a new
    # file with the mode open() gives (0666 less the umask), not mkstemp's 0600
    tmp_name = path.with_name(f'.{path.name}.{secrets.token_hex(4)}.tmp')
    file = open(tmp_name, 'xb')
    try:
        with file:
            pil_img.save(file, format=image_format)
        os.replace(tmp_name, path)
    except BaseException:
        os.remove(tmp_name)
        raise


def _array_to_chw(x, name) -> numpy.ndarray:
    x = backend.to_numpy(x)
    if x.ndim == 2:
        return numpy.repeat(x[None].astype(numpy.float32), 3, axis=0)
    if x.ndim != 3:
        raise ValueError(f'{name}: expected a (3, H, W) or (H, W, 3) array, got shape {x.shape}')
    if x.dtype == numpy.uint8:  # HWC, as PIL and most image libraries give it
        if x.shape[2] not in (1, 3, 4):
            raise ValueError(f'{name}: expected an (H, W, 3) uint8 array, got shape {x.shape}')
        x = x.transpose(2, 0, 1)[:3]
    elif x.shape[0] not in (1, 3):
        raise ValueError(f'{name}: expected a (3, H, W) float array, got shape {x.shape}')
    if x.shape[0] == 1:
        x = numpy.repeat(x, 3, axis=0)
    return numpy.ascontiguousarray(x, dtype=numpy.float32)


def _checked_finite(img, name):
    """``img`` (float32, converted from floating-point data) once it holds no NaN or inf."""
    if not numpy.isfinite(img).all():
        raise errors.UsageError(f'{name}: the image holds NaN or inf; expected finite values '
                                'in [0, 255]')
    return img


def as_chw_image(x, name='img') -> numpy.ndarray:
    """Turn any image predict() accepts into a (3, H, W) float32 RGB array in [0, 255].

    Args:
        x: a (3, H, W) (or (1, H, W)) float array, an (H, W, 3) (or (H, W, 4),
            (H, W, 1)) uint8 array, an (H, W) grey array, a PIL image, or a file path.
        name (str): how messages name ``x`` (e.g. ``'imgs[3]'``).

    Returns:
        numpy.ndarray: (3, H, W) float32 on the host (a copy when a conversion was needed).

    Raises:
        ValueError: ``x`` has a shape no image has; a
            :class:`~cvzoo.errors.UsageError` when floating-point data holds NaN or inf.
        cvzoo.errors.CorruptFileError: as :func:`read_image`, for a path.

    >>> as_chw_image(numpy.zeros((2, 5, 3), numpy.uint8)).shape
    (3, 2, 5)
    """
    if isinstance(x, (str, os.PathLike)):
        return read_image(x)
    pil = sys.modules.get('PIL.Image')  # without Pillow loaded, x is no PIL image
    if pil is not None and isinstance(x, pil.Image):
        img = _pil_to_chw(x, numpy.float32, True)
        return _checked_finite(img, name) if x.mode == 'F' else img
    if hasattr(x, 'ndim') and hasattr(x, 'dtype'):
        img = _array_to_chw(x, name)
        return _checked_finite(img, name) if numpy.issubdtype(x.dtype, numpy.inexact) else img
    raise TypeError(
        f'{name}: expected a CHW array, an HWC uint8 array, a PIL image or a path, '
        f'got {type(x).__name__}')


def as_chw_images(imgs) -> list:
    """:func:`as_chw_image` of each of ``imgs``; messages name the image ``imgs[i]``."""
    return [as_chw_image(img, f'imgs[{i}]') for i, img in enumerate(imgs)]
