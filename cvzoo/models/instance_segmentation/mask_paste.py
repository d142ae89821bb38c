"""paste_masks: (R, M, M) mask probabilities of boxes pasted into (R, H, W) bool masks.

A mask head predicts each instance's mask on a small M x M grid over its box. Pasting
scales that grid to the box's size in the image (bilinear) and thresholds it. This is
ChainerCV's ``segm_to_mask`` (its Mask R-CNN), batched:

1. the grid is zero-padded by ``pad`` cells on each side (so that the resize does not
   repeat the border cells outwards) and the box expanded by ``(M + 2 pad) / M`` about
   its centre to match;
2. the expanded box is rounded to integer pixels (half to even, as NumPy's ``round``);
3. the padded grid is resized to the rounded box's height and width with OpenCV's
   bilinear rule (sample at ``(d + 0.5) * S / n - 0.5``, clamped to the border cells);
4. pixels inside the box and inside the image whose value is above ``thresh`` are True.

The resize is separable: with ``A_y`` (H, S) and ``A_x`` (W, S) the interpolation
matrices of one box (zero rows outside it), its mask is ``A_y @ grid @ A_x^T`` at the
image's size. All boxes go through one batched matmul (in chunks that bound the memory),
on the device of the probabilities; no loop over instances or pixels.
"""

import numpy

from cvzoo.core import backend

# elements of float32 (R, H, W) results computed at once (64 MiB)
_CHUNK_ELEMENTS = 16 * 2 ** 20


def paste_masks(prob, bbox, size, *, pad=1, thresh=0.5):
    """Paste mask probabilities of boxes into masks at the image size, as ChainerCV.

    Args:
        prob (array): (R, M_h, M_w) float mask probabilities, each over its box.
        bbox (array): (R, 4) float boxes (x_min, y_min, x_max, y_max) in image pixels
            (NumPy or on ``prob``'s device).
        size (tuple of int): the image's (H, W).
        pad (int): grid cells of zeros added around each grid before the resize.
        thresh (float): a pixel is in the mask when its value is above this.

    Returns:
        array: (R, H, W) bool masks, on ``prob``'s device.

    Raises:
        ValueError: shapes that do not fit (named), or a negative ``pad``.

    >>> prob = numpy.ones((1, 2, 2), numpy.float32)
    >>> paste_masks(prob, numpy.array([[1, 1, 3, 3]], numpy.float32), (4, 5)).astype(int)
    array([[[0, 0, 0, 0, 0],
            [0, 1, 1, 0, 0],
            [0, 1, 1, 0, 0],
            [0, 0, 0, 0, 0]]])
    """
    prob, bbox, size = _check('paste_masks', prob, bbox, size)
    if not isinstance(pad, int) or pad < 0:
        raise ValueError(f'paste_masks: pad: expected an int >= 0, got {pad!r}')
    xp = backend.get_array_module(prob)
    R, M_h, M_w = prob.shape
    grid = xp.zeros((R, M_h + 2 * pad, M_w + 2 * pad), numpy.float32)
    grid[:, pad:pad + M_h, pad:pad + M_w] = prob
    bbox = backend.on_device_of(bbox, prob, numpy.float64)
    center = (bbox[:, :2] + bbox[:, 2:]) / 2
    half = (bbox[:, 2:] - bbox[:, :2]) / 2 * xp.asarray(
        [(M_w + 2 * pad) / M_w, (M_h + 2 * pad) / M_h])
    start = xp.round(center - half).astype(numpy.int64)
    stop = xp.round(center + half).astype(numpy.int64)
    return paste_in_boxes(grid, start, stop - start, size, thresh, inclusive=False)


def paste_masks_torchvision(prob, bbox, size, *, pad=1, thresh=0.5):
    """Paste mask probabilities of boxes into masks at the image size, as torchvision.

    torchvision's ``paste_masks_in_image``: the grid is zero-padded by ``pad`` cells, the
    box expanded by ``(M + 2 pad) / M`` about its centre in float32 and truncated to
    integers (toward zero), the padded grid resized (bilinear, ``align_corners=False``) to
    ``x_max - x_min + 1`` by ``y_max - y_min + 1`` pixels from (x_min, y_min), and pixels
    at or above ``thresh`` kept (the threshold of torchvision's COCO evaluation).

    Args:
        prob (array): (R, M_h, M_w) float mask probabilities, each over its box.
        bbox (array): (R, 4) float boxes (x_min, y_min, x_max, y_max) in image pixels.
        size (tuple of int): the image's (H, W).
        pad (int): grid cells of zeros added around each grid.
        thresh (float): a pixel is in the mask when its value is at least this.

    Returns:
        array: (R, H, W) bool masks, on ``prob``'s device.

    >>> prob = numpy.ones((1, 2, 2), numpy.float32)
    >>> paste_masks_torchvision(prob, numpy.array([[1, 1, 3, 3]], numpy.float32),
    ...                         (5, 5)).astype(int)
    array([[[0, 0, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 1, 1, 1, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 0, 0, 0]]])
    """
    prob, bbox, size = _check('paste_masks_torchvision', prob, bbox, size)
    if not isinstance(pad, int) or pad < 0:
        raise ValueError(f'paste_masks_torchvision: pad: expected an int >= 0, got {pad!r}')
    xp = backend.get_array_module(prob)
    R, M_h, M_w = prob.shape
    grid = xp.zeros((R, M_h + 2 * pad, M_w + 2 * pad), numpy.float32)
    grid[:, pad:pad + M_h, pad:pad + M_w] = prob
    bbox = backend.on_device_of(bbox, prob, numpy.float32)
    # NOTE: torchvision scales by the last axis's factor only (its masks are square)
    scale = numpy.float32((M_w + 2 * pad) / M_w)
    half = (bbox[:, 2:] - bbox[:, :2]) * numpy.float32(0.5) * scale
    center = (bbox[:, 2:] + bbox[:, :2]) * numpy.float32(0.5)
    start = xp.trunc(center - half).astype(numpy.int64)
    stop = xp.trunc(center + half).astype(numpy.int64)
    length = xp.maximum(stop - start + 1, 1)
    return paste_in_boxes(grid, start, length, size, thresh, inclusive=True)


def paste_in_boxes(grid, start, length, size, thresh=0.5, *, inclusive=False):
    """Resize each grid to its integer box (bilinear) and threshold it at the image size.

    The common step of every paste rule: ``grid[r]`` covers the pixels ``start[r]`` to
    ``start[r] + length[r] - 1`` (x, then y); it is resized to ``length[r]`` with the
    bilinear rule of OpenCV and of PyTorch's ``interpolate(align_corners=False)`` (both
    sample at ``(d + 0.5) * S / n - 0.5``, clamped to the border cells). Pixels outside
    the box or the image are False.

    Args:
        grid (array): (R, S_h, S_w) float values.
        start (array): (R, 2) int (x, y) of each box's first pixel (may be negative).
        length (array): (R, 2) int (width, height) of each box, in pixels; a box with a
            side < 1 gives an empty mask.
        size (tuple of int): the image's (H, W).
        thresh (float): the threshold.
        inclusive (bool): True keeps values ``>= thresh`` (torchvision), False ``>``
            (ChainerCV).

    Returns:
        array: (R, H, W) bool, on ``grid``'s device.
    """
    xp = backend.get_array_module(grid)
    R, S_h, S_w = grid.shape
    H, W = size
    masks = xp.zeros((R, H, W), bool)
    # NOTE: float32 weights, as OpenCV's for a float32 image
    along_y = _interpolation_matrix(xp, start[:, 1], length[:, 1], H, S_h)
    along_x = _interpolation_matrix(xp, start[:, 0], length[:, 0], W, S_w)
    step = max(1, _CHUNK_ELEMENTS // max(1, H * W))
    for first in range(0, R, step):  # NOTE: one batched matmul per chunk of instances
        part = slice(first, first + step)
        value = xp.matmul(xp.matmul(along_y[part], grid[part]),
                          along_x[part].transpose(0, 2, 1))
        masks[part] = value >= thresh if inclusive else value > thresh
    return masks


def bilinear_taps(xp, position, n_out, n_in):
    """The two input cells and weights of output cells in a bilinear resize of n_in to n_out.

    OpenCV's INTER_LINEAR and PyTorch's ``interpolate(align_corners=False)``: output cell
    d samples the input at ``s = (d + 0.5) * n_in / n_out - 0.5`` (computed in float64,
    rounded to float32 as OpenCV does), weight ``1 - f`` on cell ``floor(s)`` and ``f``
    on the next; samples before the first cell or past the last take that cell.

    Args:
        xp: the array module.
        position (array): int output cells d, any shape.
        n_out, n_in (int or array): output and input lengths (>= 1), broadcast with
            ``position``.

    Returns:
        tuple: ``low``, ``high`` (int64 input cells) and ``frac`` (float32 weight of
        ``high``), each of the broadcast shape.

    >>> low, high, frac = bilinear_taps(numpy, numpy.arange(4), 4, 2)
    >>> low.tolist(), high.tolist(), frac.tolist()
    ([0, 0, 0, 1], [1, 1, 1, 1], [0.0, 0.25, 0.75, 0.0])
    """
    sample = ((position + 0.5) * (n_in / n_out) - 0.5).astype(numpy.float32)
    low = xp.floor(sample)
    frac = sample - low
    low = low.astype(numpy.int64)
    outside = (low < 0) | (low >= n_in - 1)
    frac = xp.where(outside, 0, frac).astype(numpy.float32)
    low = xp.clip(low, 0, xp.maximum(n_in - 1, 0))
    high = xp.minimum(low + 1, xp.maximum(n_in - 1, 0))
    return low, high, frac


def _interpolation_matrix(xp, start, length, n_pixel, n_cell):
    """(R, n_pixel, n_cell) float32 bilinear weights of each box's pixels on its cells.

    Pixel p of box r (``0 <= p - start[r] < length[r]``) samples its grid at
    ``(p - start + 0.5) * n_cell / length - 0.5`` (:func:`bilinear_taps`); rows of
    pixels outside the box are zero.
    """
    offset = xp.arange(n_pixel)[None, :] - start[:, None]                    # (R, P)
    inside = (offset >= 0) & (offset < length[:, None])
    low, high, frac = bilinear_taps(xp, offset, xp.maximum(length, 1)[:, None], n_cell)
    cell = xp.arange(n_cell)[None, None, :]
    weight = (1 - frac)[:, :, None] * (cell == low[:, :, None]) + \
        frac[:, :, None] * (cell == high[:, :, None])
    return (weight * inside[:, :, None]).astype(numpy.float32)


def _check(name, prob, bbox, size):
    """Validate paste arguments; returns them with ``size`` as a pair of ints."""
    if getattr(prob, 'ndim', None) != 3:
        raise ValueError(f'{name}: prob: expected an (R, M, M) array, got shape '
                         f'{getattr(prob, "shape", type(prob).__name__)}')
    if getattr(bbox, 'shape', None) != (prob.shape[0], 4):
        raise ValueError(f'{name}: bbox: expected shape ({prob.shape[0]}, 4) (one box per '
                         f'mask), got {getattr(bbox, "shape", type(bbox).__name__)}')
    if len(size) != 2 or min(size) < 0:
        raise ValueError(f'{name}: size: expected (H, W) >= 0, got {size!r}')
    return prob, bbox, (int(size[0]), int(size[1]))
