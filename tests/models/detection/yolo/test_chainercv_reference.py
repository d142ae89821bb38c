"""A ChainerCV-converted YOLOv2-tiny gives ChainerCV's boxes: a numpy transcription of
ChainerCV's YOLOv2Base._decode and YOLOBase.predict (y-first throughout) as reference."""

import numpy

from cvzoo.core import config
from cvzoo.models.detection.yolo.resize_contain import contain_size, resize_contain
from cvzoo.models.detection.yolo.yolo_v2 import YOLOv2Tiny

ANCHORS_HW = ((1.19, 1.08), (4.41, 3.42), (11.38, 6.63), (5.11, 9.42), (10.52, 16.62))


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _chainercv_boxes(raw_yfirst, insize, size):
    """ChainerCV's candidate boxes (y_min, x_min, y_max, x_max) in image pixels, scores."""
    n_anchor = len(ANCHORS_HW)
    _, grid, _ = raw_yfirst.shape
    h = raw_yfirst.transpose(1, 2, 0).reshape(-1, raw_yfirst.shape[0] // n_anchor)
    loc, obj, conf = h[:, :4], h[:, 4], h[:, 5:]
    default_bbox = numpy.array([(v, u, ah, aw) for v in range(grid) for u in range(grid)
                                for ah, aw in ANCHORS_HW], numpy.float64)
    bbox = default_bbox.copy()
    bbox[:, :2] += _sigmoid(loc[:, :2])
    bbox[:, 2:] *= numpy.exp(loc[:, 2:])
    bbox[:, :2] -= bbox[:, 2:] / 2
    bbox[:, 2:] += bbox[:, :2]
    bbox *= insize / grid
    conf = numpy.exp(conf)
    conf /= conf.sum(axis=1, keepdims=True)
    score = _sigmoid(obj)[:, None] * conf
    scaled = contain_size(size, (insize, insize))
    # translate by -insize/2, resize from the scaled size to the image's, translate back
    bbox = (bbox - insize / 2) * numpy.tile(numpy.array(size) / scaled, 2) + numpy.tile(
        numpy.array(size) / 2, 2)
    return bbox, score


def test_decode_equals_the_chainercv_transcription(tmp_path, rng, chainercv):
    arrays = chainercv.random_file(rng, chainercv.yolov2_tiny_shapes(20))
    # NOTE: a zero head makes ChainerCV's raw output its bias at every cell, known
    # without running any network: the reference does not depend on the conversion.
    arrays['subnet/W'][:] = 0
    arrays['subnet/b'] = rng.uniform(-2, 2, 125).astype(numpy.float32)
    path = tmp_path / 'chainercv_tiny.npz'
    numpy.savez(path, **arrays)
    model = YOLOv2Tiny(pretrained_model=str(path))
    model.insize = (128, 128)
    img = rng.uniform(0, 255, (3, 150, 100)).astype(numpy.float32)
    x = model.prepare(img)
    numpy.testing.assert_array_equal(x, resize_contain(img / 255, (128, 128)))
    with config.using_config('train', False), config.no_backprop_mode():
        outputs = model(x[None])
        bbox, score = model.decode(outputs, [(150, 100)])
    # same rows on both sides: (row, column, anchor), anchor fastest
    raw_yfirst = numpy.broadcast_to(arrays['subnet/b'][:, None, None], (125, 4, 4))
    expected_bbox, expected_score = _chainercv_boxes(raw_yfirst.astype(numpy.float64), 128,
                                                     (150, 100))
    numpy.testing.assert_allclose(score[0], expected_score, rtol=1e-4, atol=1e-7)
    numpy.testing.assert_allclose(bbox[0], expected_bbox[:, [1, 0, 3, 2]], rtol=1e-4,
                                  atol=1e-3)
