"""Resize an image so that its shorter (or longer) side has a given length."""

from cvzoo.transforms.image.resize import resize


def scale(img, size, fit_short=True, interpolation='bilinear'):
    """Resize keeping the aspect ratio, so that one side becomes ``size``.

    Args:
        img (numpy.ndarray): (C, H, W).
        size (int): the target length of the shorter side (``fit_short=True``) or of the
            longer side (``fit_short=False``).
        fit_short (bool): which side gets ``size``.
        interpolation (str): as in resize.

    Returns:
        numpy.ndarray: the resized image (img itself when the size already fits).

    >>> import numpy
    >>> scale(numpy.zeros((3, 20, 40), numpy.float32), 10).shape
    (3, 10, 20)
    """
    H, W = img.shape[1:]
    if (H < W) == fit_short:
        out_size = (size, int(size * W / H))
    else:
        out_size = (int(size * H / W), size)
    if out_size == (H, W):
        return img
    return resize(img, out_size, interpolation)
