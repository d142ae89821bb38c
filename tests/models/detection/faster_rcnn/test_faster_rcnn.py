"""Tests of FasterRCNN's decode and suppress against an independent y-first reference."""

import types

import numpy

from cvzoo.core.variable import Variable
from cvzoo.models.detection.faster_rcnn import faster_rcnn


def _chainercv_decode(roi, loc, std):
    """ChainerCV's loc2bbox, y-first: boxes (y_min, x_min, y_max, x_max), loc (dy, dx, dh, dw)."""
    loc = loc * std
    height, width = roi[:, 2] - roi[:, 0], roi[:, 3] - roi[:, 1]
    ctr_y, ctr_x = roi[:, 0] + 0.5 * height, roi[:, 1] + 0.5 * width
    out = numpy.zeros_like(loc)
    for i in range(len(roi)):
        y = loc[i, 0] * height[i] + ctr_y[i]
        x = loc[i, 1] * width[i] + ctr_x[i]
        h = numpy.exp(loc[i, 2]) * height[i]
        w = numpy.exp(loc[i, 3]) * width[i]
        out[i] = [y - h / 2, x - w / 2, y + h / 2, x + w / 2]
    return out


def _stub(n_class):
    return types.SimpleNamespace(head=types.SimpleNamespace(n_class=n_class),
                                 loc_normalize_mean=(0.0,) * 4,
                                 loc_normalize_std=(0.1, 0.1, 0.2, 0.2), exp_clip=None)


def test_decode_matches_the_y_first_reference():
    rng = numpy.random.RandomState(0)
    n_class, scale = 3, 2.0
    corner = rng.uniform(0, 100, (5, 2))
    roi_xy = numpy.concatenate((corner, corner + rng.uniform(10, 50, (5, 2))), 1)
    roi_xy = roi_xy.astype(numpy.float32)
    loc_yx = rng.uniform(-1, 1, (5, n_class, 4)).astype(numpy.float32)
    loc_xy = loc_yx[:, :, [1, 0, 3, 2]]
    score = rng.randn(5, n_class).astype(numpy.float32)
    outputs = (Variable(loc_xy.reshape(5, -1)), Variable(score), roi_xy,
               numpy.zeros(5, numpy.int32))
    size = (1000, 1000)  # no clipping
    bbox, prob = faster_rcnn.FasterRCNN.decode(_stub(n_class), outputs, [size], [scale])
    assert bbox.shape == (1, 5, n_class - 1, 4) and prob.shape == (1, 5, n_class - 1)
    roi_yx = roi_xy[:, [1, 0, 3, 2]] / scale
    for label in range(1, n_class):
        expected = _chainercv_decode(roi_yx, loc_yx[:, label], numpy.float32([.1, .1, .2, .2]))
        numpy.testing.assert_allclose(bbox[0, :, label - 1], expected[:, [1, 0, 3, 2]],
                                      rtol=1e-5, atol=1e-4)
    softmax = numpy.exp(score) / numpy.exp(score).sum(axis=1, keepdims=True)
    numpy.testing.assert_allclose(prob[0], softmax[:, 1:], rtol=1e-5)


def test_decode_pads_images_with_fewer_rois_and_clips():
    roi = numpy.array([[0, 0, 10, 10], [5, 5, 20, 20], [0, 0, 8, 8]], numpy.float32)
    outputs = (Variable(numpy.zeros((3, 8), numpy.float32)),
               Variable(numpy.zeros((3, 2), numpy.float32)), roi,
               numpy.array([0, 0, 1], numpy.int32))
    bbox, prob = faster_rcnn.FasterRCNN.decode(_stub(2), outputs, [(15, 12), (30, 30)],
                                               [1.0, 0.5])
    assert bbox.shape == (2, 2, 1, 4)
    numpy.testing.assert_allclose(bbox[0, 1, 0], [5, 5, 12, 15])  # clipped to W 12, H 15
    numpy.testing.assert_allclose(bbox[1, 0, 0], [0, 0, 16, 16])  # back to the image scale
    numpy.testing.assert_allclose(prob[1, 1], 0)  # padding row


def test_suppress_is_per_image_and_per_class():
    model = types.SimpleNamespace(score_thresh=0.5, nms_thresh=0.5, inclusive_score_thresh=False,
                                  later_candidate_wins_ties=False, max_detections=None)
    bbox = numpy.zeros((2, 2, 2, 4), numpy.float32)
    bbox[:, :, :] = [0, 0, 10, 10]
    bbox[:, 1, :] = [1, 1, 10, 10]  # overlaps box 0 (IoU 0.81)
    score = numpy.array([[[0.9, 0.6], [0.8, 0.7]], [[0.1, 0.2], [0.55, 0.3]]], numpy.float32)
    bboxes, labels, scores = faster_rcnn.FasterRCNN.suppress(model, bbox, score, [(20, 20)] * 2)
    numpy.testing.assert_array_equal(labels[0], [0, 1])  # class 1's 0.6 is suppressed by 0.7
    numpy.testing.assert_allclose(scores[0], [0.9, 0.7])
    numpy.testing.assert_allclose(bboxes[0][1], [1, 1, 10, 10])
    numpy.testing.assert_array_equal(labels[1], [0])
    assert bboxes[1].dtype == numpy.float32 and labels[1].dtype == numpy.int32
