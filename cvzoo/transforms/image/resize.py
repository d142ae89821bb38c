"""Resize a CHW image with Pillow, channel by channel in float32."""

import numpy

# Pillow's resampling filters by name; Pillow itself is imported on the first resize, so
# that importing a model (and listing the zoo) does not load it
_RESAMPLE = ('nearest', 'bilinear', 'bicubic', 'lanczos', 'box', 'hamming')


def resize(img, size, interpolation='bilinear'):
    """Resize an image to ``size`` = (H, W).

    Each channel goes through Pillow as a 32-bit float image (mode 'F'), so values are
    not rounded to 8 bits and out-of-range values survive.

    Args:
        img (numpy.ndarray): (C, H, W), any real dtype.
        size (tuple of int): (H, W) of the output.
        interpolation (str): 'nearest', 'bilinear' (default), 'bicubic', 'lanczos',
            'box' or 'hamming'.

    Returns:
        numpy.ndarray: (C, out_H, out_W) of img's dtype (float32 math inside).

    >>> resize(numpy.ones((3, 4, 6), numpy.float32), (2, 3)).shape
    (3, 2, 3)
    """
    if interpolation not in _RESAMPLE:
        raise ValueError(f'interpolation: expected one of {sorted(_RESAMPLE)}, '
                         f'got {interpolation!r}')
    if len(size) != 2 or min(size) < 1:
        raise ValueError(f'size: expected (H, W) with positive sides, got {size!r}')
    H, W = int(size[0]), int(size[1])
    if img.shape[1:] == (H, W):
        return img.copy()
    from PIL import Image

    resample = getattr(Image.Resampling, interpolation.upper())
    channels = [
        numpy.asarray(Image.fromarray(numpy.ascontiguousarray(channel, numpy.float32), 'F')
                      .resize((W, H), resample))
        for channel in img
    ]
    return numpy.stack(channels).astype(img.dtype, copy=False)
