"""ChainerCV's YOLO preprocessing: scale down to fit, never up, centre on a grey canvas.

ChainerCV's ``YOLOBase.predict`` and ``YOLOv3.predict`` call
``transforms.resize_contain(img / 255, (insize, insize), fill=0.5)``: the scale is
``min(insize / H, insize / W, 1)`` (small images are not enlarged), the scaled size is
``(int(H * scale), int(W * scale))``, and the image is placed at offset
``(insize - scaled) // 2``. Its weights entries say ``cv2``: the resize was OpenCV's
``INTER_LINEAR`` on float32 data, i.e. half-pixel-centred bilinear sampling without
anti-aliasing, which :func:`bilinear_half_pixel` reproduces in float32.
"""

import numpy


def _sample_positions(n_in, n_out):
    """Source index and fraction per output position, OpenCV's INTER_LINEAR rule."""
    position = (numpy.arange(n_out, dtype=numpy.float64) + 0.5) * (n_in / n_out) - 0.5
    index = numpy.floor(position).astype(numpy.int64)
    fraction = (position - index).astype(numpy.float32)
    # NOTE: OpenCV clamps at both borders and then uses the edge pixel alone.
    low, high = index < 0, index >= n_in - 1
    fraction[low | high] = 0
    index = numpy.clip(index, 0, n_in - 1)
    return index, numpy.minimum(index + 1, n_in - 1), fraction


def bilinear_half_pixel(img, size):
    """Resize a (C, H, W) float image to ``size`` = (H, W) as cv2.INTER_LINEAR does.

    >>> img = numpy.array([[[0., 1.]]], numpy.float32)
    >>> bilinear_half_pixel(img, (1, 4))[0, 0].tolist()
    [0.0, 0.25, 0.75, 1.0]
    """
    img = numpy.asarray(img, numpy.float32)
    if img.shape[1:] == tuple(size):
        return img.copy()
    top, bottom, dy = _sample_positions(img.shape[1], int(size[0]))
    left, right, dx = _sample_positions(img.shape[2], int(size[1]))
    rows = (1 - dy)[:, None] * img[:, top] + dy[:, None] * img[:, bottom]
    return (1 - dx) * rows[:, :, left] + dx * rows[:, :, right]


def contain_size(size, insize):
    """(H, W) an image of ``size`` is scaled to inside a canvas of ``insize`` (no upscaling)."""
    H, W = size
    scale = min(insize[0] / H, insize[1] / W, 1.0)
    return int(H * scale), int(W * scale)


def resize_contain(img, insize, fill=0.5):
    """ChainerCV's resize_contain of an image already divided by 255.

    Args:
        img (numpy.ndarray): (C, H, W) float32, values in [0, 1].
        insize (tuple of int): (H, W) of the canvas.
        fill (float): value of the canvas outside the image.

    Returns:
        numpy.ndarray: (C, insize[0], insize[1]) float32.
    """
    scaled = contain_size(img.shape[1:], insize)
    if scaled != tuple(img.shape[1:]):
        img = bilinear_half_pixel(img, scaled)
    canvas = numpy.full((img.shape[0],) + tuple(insize), fill, numpy.float32)
    top, left = (insize[0] - scaled[0]) // 2, (insize[1] - scaled[1]) // 2
    canvas[:, top:top + scaled[0], left:left + scaled[1]] = img
    return canvas
