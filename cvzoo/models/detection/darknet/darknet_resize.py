"""darknet_resize: Darknet's own bilinear image resize, reproduced bit for bit in float32.

Darknet's ``resize_image`` (image.c) samples with corners aligned (scale
``(src - 1) / (dst - 1)``), first along the width and then along the height, with no
anti-aliasing. Its last output column is a copy of the source's last column, and its
last output row keeps only the ``(1 - dy)`` term of the interpolation. Every step is
done in float32 here in the same order, so the result equals the C code's.
``darknet_letterbox`` is its letterbox_image (for cfgs with ``letter_box=1``).
"""

import numpy


def _source_positions(n_in, n_out):
    """Integer source index and float32 fraction of each of ``n_out`` output positions."""
    scale = numpy.float32(n_in - 1) / numpy.float32(n_out - 1)
    position = numpy.arange(n_out, dtype=numpy.float32) * scale
    index = position.astype(numpy.int64)  # truncation, as C's (int) cast of a positive float
    fraction = position - index.astype(numpy.float32)
    return index, fraction


def darknet_resize(img, size):
    """Resize a CHW float image the way Darknet's ``resize_image`` does.

    Args:
        img (numpy.ndarray): (C, H, W) float32 image (Darknet resizes values in [0, 1]).
        size (tuple of int): (H, W) of the output, each >= 2.

    Returns:
        numpy.ndarray: (C, size[0], size[1]) float32.

    Raises:
        ValueError: ``img`` is not (C, H, W) or ``size`` is not two ints >= 2.

    >>> img = numpy.arange(6, dtype=numpy.float32).reshape(1, 2, 3)
    >>> darknet_resize(img, (2, 5))[0]
    array([[0. , 0.5, 1. , 1.5, 2. ],
           [3. , 3.5, 4. , 4.5, 5. ]], dtype=float32)
    """
    if getattr(img, 'ndim', None) != 3:
        raise ValueError(f'img: expected a (C, H, W) array, got shape {getattr(img, "shape", None)}')
    if len(size) != 2 or min(int(s) for s in size) < 2:
        raise ValueError(f'size: expected (H, W) with both >= 2, got {size!r}')
    img = numpy.asarray(img, dtype=numpy.float32)
    H, W = int(size[0]), int(size[1])
    in_H, in_W = img.shape[1:]
    if in_W == 1:
        part = numpy.repeat(img, W, axis=2)
    else:
        index, dx = _source_positions(in_W, W)
        index[-1] = in_W - 2  # never read: the last column is copied below
        part = (numpy.float32(1) - dx) * img[:, :, index] + dx * img[:, :, index + 1]
        part[:, :, -1] = img[:, :, -1]
    if in_H == 1:
        return numpy.repeat(part, H, axis=1)
    index, dy = _source_positions(in_H, H)
    upper = (numpy.float32(1) - dy)[:, None] * part[:, index, :]
    # NOTE: Darknet skips the dy term on the last row (it would read row in_H).
    lower_index = numpy.minimum(index + 1, in_H - 1)
    lower = dy[:, None] * part[:, lower_index, :]
    lower[:, -1, :] = 0
    return upper + lower


def letterbox_size(size, insize):
    """(H, W) of an image of ``size`` scaled into ``insize`` keeping its aspect ratio.

    Darknet's integer arithmetic (letterbox_image, correct_yolo_boxes): the side that
    limits the scale gets the network's size, the other ``side * net / limiting side``
    rounded down.
    """
    H, W = int(size[0]), int(size[1])
    net_H, net_W = int(insize[0]), int(insize[1])
    if net_W / W < net_H / H:
        return (H * net_W) // W, net_W
    return net_H, (W * net_H) // H


def darknet_letterbox(img, insize):
    """Darknet's letterbox_image: resize keeping the aspect ratio, centre on grey 0.5.

    Args:
        img (numpy.ndarray): (C, H, W) float32 in [0, 1].
        insize (tuple of int): (H, W) of the network input.

    Returns:
        numpy.ndarray: (C, insize[0], insize[1]) float32.
    """
    new_H, new_W = letterbox_size(img.shape[1:], insize)
    canvas = numpy.full((img.shape[0],) + tuple(insize), 0.5, numpy.float32)
    top, left = (insize[0] - new_H) // 2, (insize[1] - new_W) // 2
    canvas[:, top:top + new_H, left:left + new_W] = darknet_resize(img, (new_H, new_W))
    return canvas
