"""PSPNet's test-time inference: sliding windows over large images, a padded canvas for
small ones, and the horizontal flip; as ChainerCV's ``PSPNet._tile_predict``.

Every function takes ``predict``, a callable from a (B, C, h, w) preprocessed batch on
the model's device to (B, n_class, h, w) class probabilities, so the tiling logic can
be tested with any toy network.
"""

import math

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend

STRIDE_RATE = 2 / 3


def window_slices(size, window, stride):
    """The windows covering an image, laid out as ChainerCV's ``convolution_crop``.

    ``ceil((H - h) / stride) + 1`` windows per column (and likewise per row) are spread
    from ``(-(h + stride * (n - 1) - H)) // 2`` on, so that they overhang both borders
    by the same amount (give or take a pixel); the overhang is zero padding.

    Args:
        size (tuple of int): (H, W) of the image.
        window (tuple of int): (h, w) of a window.
        stride (tuple of int): (sy, sx) between windows.

    Returns:
        list of (tuple, tuple): per window, ``(image_slices, window_slices)``: the
        (y, x) slices of the image it covers and the same region in the window's own
        coordinates.

    >>> window_slices((10, 20), (10, 12), (10, 8))[1]
    ((slice(0, 10, None), slice(8, 20, None)), (slice(0, 10, None), slice(0, 12, None)))
    """
    per_axis = [_axis_windows(n, w, s) for n, w, s in zip(size, window, stride)]
    return [((image_y, image_x), (crop_y, crop_x))
            for image_y, crop_y in per_axis[0] for image_x, crop_x in per_axis[1]]


def _axis_windows(n, window, stride):
    n_window = math.ceil((n - window) / stride) + 1
    start = -(window + stride * (n_window - 1) - n) // 2
    windows = []
    for k in range(n_window):
        low, high = start + k * stride, start + k * stride + window
        windows.append((slice(max(low, 0), min(high, n)),
                        slice(max(-low, 0), window - max(high - n, 0))))
    return windows


def crop_windows(img, windows, window):
    """Cut the windows out of a (C, H, W) image into a zero-padded (N, C, h, w) batch."""
    crops = numpy.zeros((len(windows), img.shape[0]) + tuple(window), img.dtype)
    for crop, (image_slices, crop_slices) in zip(crops, windows):
        crop[(slice(None),) + crop_slices] = img[(slice(None),) + image_slices]
    return crops


def predict_with_flip(predict, x, device, flip, batchsize=1):
    """Class probabilities of a host batch, averaged with those of its mirror image.

    Args:
        predict (callable): see the module docstring.
        x (numpy.ndarray): (N, C, h, w) float32 preprocessed images on the host.
        device: where ``predict`` runs.
        flip (bool): also predict the left-right mirrored images and average.
        batchsize (int): images (before mirroring) per call of ``predict``.

    Returns:
        array: (N, n_class, h, w) float32 on ``device``.
    """
    outputs = []
    for start in range(0, len(x), batchsize):
        chunk = x[start:start + batchsize]
        if flip:
            chunk = numpy.concatenate([chunk, chunk[:, :, :, ::-1]])
        prob = predict(backend.to_device(numpy.ascontiguousarray(chunk), device))
        if flip:
            n = len(prob) // 2
            prob = (prob[:n] + prob[n:, :, :, ::-1]) / 2
        outputs.append(prob)
    xp = backend.get_array_module(outputs[0])
    return xp.concatenate(outputs)


def tile_scores(predict, img, window, device, *, flip=True, batchsize=1):
    """Average class probabilities of the sliding windows (stride 2/3 of the window).

    Args:
        img (numpy.ndarray): (C, H, W) float32 preprocessed image on the host.
        window (tuple of int): (h, w), the network's input size.
        Others: as in :func:`predict_with_flip`.

    Returns:
        array: (n_class, H, W) float32 on ``device``; each pixel is the mean over the
        windows that cover it.
    """
    size = img.shape[1:]
    stride = tuple(math.ceil(w * STRIDE_RATE) for w in window)
    windows = window_slices(size, window, stride)
    probs = predict_with_flip(predict, crop_windows(img, windows, window), device, flip,
                              batchsize)
    xp = backend.get_array_module(probs)
    total = xp.zeros((probs.shape[1],) + tuple(size), probs.dtype)
    count = xp.zeros(tuple(size), probs.dtype)
    for prob, (image_slices, crop_slices) in zip(probs, windows):
        total[(slice(None),) + image_slices] += prob[(slice(None),) + crop_slices]
        count[image_slices] += 1
    return total / count


def contain_scores(predict, img, window, device, *, flip=True):
    """Class probabilities of an image no larger than the window, as ChainerCV's
    ``resize_contain``: shrunk (keeping its aspect ratio) only if a side exceeds the
    window, centred on a zero canvas of the window's size, and the scores of its
    region resized back to the image's size (bilinear, corners aligned).

    Returns:
        array: (n_class, H, W) float32 on ``device``.
    """
    size = img.shape[1:]
    scale = min(window[0] / size[0], window[1] / size[1], 1.0)
    scaled = (int(size[0] * scale), int(size[1] * scale))
    if scale < 1:
        img = F.resize_images(img[None], scaled, align_corners=False).array[0]
    # NOTE: the offset is ChainerCV's intent, floor((window - side) / 2); its
    # _get_pad_slice drops a pixel when that difference is odd.
    top, left = ((w - s) // 2 for w, s in zip(window, scaled))
    region = (slice(top, top + scaled[0]), slice(left, left + scaled[1]))
    canvas = numpy.zeros((1, img.shape[0]) + tuple(window), numpy.float32)
    canvas[(0, slice(None)) + region] = img
    prob = predict_with_flip(predict, canvas, device, flip)
    prob = prob[(slice(None), slice(None)) + region]
    return F.resize_images(prob, size, align_corners=True).array[0]
