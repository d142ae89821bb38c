"""decode_yolo_head: boxes and class scores from one ``[yolo]`` or ``[region]`` map.

The raw map has channel ``a * (5 + C) + e`` for anchor ``a`` and entry ``e`` (tx, ty,
tw, th, objectness, C class logits). For the cell in column i, row j of an (h, w) grid
(Darknet's yolo_layer.c and region_layer.c)::

    bx = (i + s * sigmoid(tx) - (s - 1) / 2) / w        s = scale_x_y (1 for region)
    by = (j + s * sigmoid(ty) - (s - 1) / 2) / h
    bw = exp(tw) * anchor_w / net_w   (yolo: anchors in network-input pixels)
    bw = exp(tw) * anchor_w / w       (region: anchors in grid cells)
    score[c] = sigmoid(to) * sigmoid(tc)        (yolo: independent class sigmoids)
    score[c] = sigmoid(to) * softmax(t)[c]      (region)

Boxes come out as fractions of the network input, which without letterboxing are also
fractions of the original image.
"""

import numpy

from cvzoo.core import backend


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _softmax(xp, x, axis):
    e = xp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def decode_yolo_head(raw, head, insize):
    """Decode one head map into normalised boxes and per-class scores (array math, no graph).

    Args:
        raw (array): (B, A * (5 + C), h, w) float raw map, NumPy or on the device.
        head (dict): ``kind`` ('yolo' or 'region'), ``n_class`` C, ``anchors`` (A, 2)
            float (w, h), ``scale_x_y``; as ``CfgNetwork.heads`` holds them.
        insize (tuple of int): (H, W) of the network input.

    Returns:
        tuple of arrays: ``bbox`` (B, h * w * A, 4) (x_min, y_min, x_max, y_max) as
        fractions of the network input, and ``score`` (B, h * w * A, C), both of raw's
        dtype. Rows run over (row, column, anchor), anchor fastest, as Darknet's.

    >>> import numpy as np
    >>> head = {'kind': 'yolo', 'n_class': 1, 'anchors': np.array([[32., 32.]]),
    ...         'scale_x_y': 1.0}
    >>> bbox, score = decode_yolo_head(np.zeros((1, 6, 1, 1), np.float32), head, (64, 64))
    >>> bbox[0, 0].tolist(), score[0, 0].tolist()
    ([0.25, 0.25, 0.75, 0.75], [0.25])
    """
    xp = backend.get_array_module(raw)
    B, _, h, w = raw.shape
    n_class = head['n_class']
    anchors = backend.device_constant(numpy.asarray(head['anchors'], raw.dtype), raw)
    n_anchor = len(anchors)
    # (B, A, 5 + C, h, w) -> (B, h, w, A, 5 + C)
    t = raw.reshape(B, n_anchor, 5 + n_class, h, w).transpose(0, 3, 4, 1, 2)
    dtype = raw.dtype.type
    if head['kind'] == 'yolo':
        s = dtype(head['scale_x_y'])
        shift = (s - 1) / 2
        anchor_scale = backend.device_constant(
            numpy.array([insize[1], insize[0]], raw.dtype), raw)
        class_prob = _sigmoid(xp, t[..., 5:])
    else:
        s, shift = dtype(1), dtype(0)
        anchor_scale = backend.device_constant(numpy.array([w, h], raw.dtype), raw)
        class_prob = _softmax(xp, t[..., 5:], axis=-1)
    column = xp.arange(w, dtype=raw.dtype)[None, None, :, None]
    row = xp.arange(h, dtype=raw.dtype)[None, :, None, None]
    center_x = (column + s * _sigmoid(xp, t[..., 0]) - shift) / w
    center_y = (row + s * _sigmoid(xp, t[..., 1]) - shift) / h
    size = xp.exp(t[..., 2:4]) * anchors / anchor_scale
    center = xp.stack([center_x, center_y], axis=-1)
    bbox = xp.concatenate([center - size / 2, center + size / 2], axis=-1)
    score = _sigmoid(xp, t[..., 4:5]) * class_prob
    return bbox.reshape(B, -1, 4), score.reshape(B, -1, n_class)
