"""decode_yolo_head against hand-computed values and a loop over cells (Darknet order)."""

import math

import numpy
import pytest

from cvzoo.models.detection.darknet.yolo_decoder import decode_yolo_head


def _sigmoid(v):
    return 1 / (1 + math.exp(-v))


def test_one_cell_by_hand():
    # one anchor (16, 8) px, 2 classes, 2 x 2 grid, 64 x 32 network input
    raw = numpy.zeros((1, 7, 2, 2), numpy.float64)
    raw[0, :, 1, 0] = [1.0, -2.0, 0.5, -0.25, 2.0, 0.0, -1.0]  # row 1, column 0
    head = {'kind': 'yolo', 'n_class': 2, 'anchors': numpy.array([[16.0, 8.0]]),
            'scale_x_y': 1.0}
    bbox, score = decode_yolo_head(raw, head, (32, 64))
    center_x = (0 + _sigmoid(1.0)) / 2
    center_y = (1 + _sigmoid(-2.0)) / 2
    width, height = math.exp(0.5) * 16 / 64, math.exp(-0.25) * 8 / 32
    row = 2  # (row 1, column 0) is the third cell
    numpy.testing.assert_allclose(bbox[0, row], [center_x - width / 2, center_y - height / 2,
                                                 center_x + width / 2, center_y + height / 2])
    numpy.testing.assert_allclose(score[0, row], [_sigmoid(2.0) * 0.5,
                                                  _sigmoid(2.0) * _sigmoid(-1.0)])


def test_scale_x_y():
    raw = numpy.zeros((1, 6, 1, 3), numpy.float64)
    raw[0, 0, 0, 2] = 0.7
    head = {'kind': 'yolo', 'n_class': 1, 'anchors': numpy.array([[4.0, 4.0]]),
            'scale_x_y': 1.2}
    bbox, _ = decode_yolo_head(raw, head, (10, 30))
    center_x = (2 + 1.2 * _sigmoid(0.7) - 0.1) / 3
    numpy.testing.assert_allclose((bbox[0, 2, 0] + bbox[0, 2, 2]) / 2, center_x)


def _loop_decode(raw, anchors, n_class, kind, insize, s=1.0):
    """Darknet's get_yolo_detections / get_region_detections order and formulas."""
    _, _, h, w = raw.shape
    rows = []
    for j in range(h):
        for i in range(w):
            for a, (anchor_w, anchor_h) in enumerate(anchors):
                t = raw[0, a * (5 + n_class):(a + 1) * (5 + n_class), j, i]
                x = (i + s * _sigmoid(t[0]) - (s - 1) / 2) / w
                y = (j + s * _sigmoid(t[1]) - (s - 1) / 2) / h
                scale = (insize[1], insize[0]) if kind == 'yolo' else (w, h)
                bw, bh = math.exp(t[2]) * anchor_w / scale[0], math.exp(t[3]) * anchor_h / scale[1]
                if kind == 'yolo':
                    prob = [_sigmoid(v) for v in t[5:]]
                else:
                    e = numpy.exp(t[5:] - t[5:].max())
                    prob = list(e / e.sum())
                rows.append(([x - bw / 2, y - bh / 2, x + bw / 2, y + bh / 2],
                             [_sigmoid(t[4]) * p for p in prob]))
    return numpy.array([r[0] for r in rows]), numpy.array([r[1] for r in rows])


@pytest.mark.parametrize('kind, s', [('yolo', 1.0), ('yolo', 1.1), ('region', 1.0)],
                         ids=['yolo', 'yolo_scale_x_y', 'region_softmax'])
@pytest.mark.parametrize('dtype', [numpy.float32, numpy.float64], ids=['f32', 'f64'])
def test_matches_loop(kind, s, dtype, rng):
    anchors = numpy.array([[10.0, 14.0], [23.0, 27.0], [37.0, 58.0]])
    raw = rng.standard_normal((2, 3 * 8, 3, 4)).astype(dtype)
    head = {'kind': kind, 'n_class': 3, 'anchors': anchors, 'scale_x_y': s}
    bbox, score = decode_yolo_head(raw, head, (96, 128))
    assert bbox.dtype == dtype and score.dtype == dtype
    assert bbox.shape == (2, 36, 4) and score.shape == (2, 36, 3)
    expected_bbox, expected_score = _loop_decode(raw[1:].astype(numpy.float64), anchors, 3,
                                                 kind, (96, 128), s)
    tol = 1e-5 if dtype == numpy.float32 else 1e-12
    numpy.testing.assert_allclose(bbox[1], expected_bbox, rtol=tol, atol=tol)
    numpy.testing.assert_allclose(score[1], expected_score, rtol=tol, atol=tol)
