"""DarknetDetector.predict(): the detection contract on tiny random-weight models."""

import numpy
import pytest

from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector
from cvzoo.testing import assert_is_detection_model
from cvzoo.utils import bbox as bbox_utils


@pytest.fixture(params=['yolo', 'region'])
def model(request, tiny_cfg):
    model = DarknetDetector(tiny_cfg(request.param))
    model.use_preset('evaluate')
    return model


def _images(rng, sizes):
    return [rng.uniform(0, 255, (3, H, W)).astype(numpy.float32) for H, W in sizes]


@pytest.mark.parametrize('sizes', [[(40, 60)], [(40, 60), (25, 33), (64, 48)]],
                         ids=['batch1', 'batch3'])
def test_contract(model, rng, sizes):
    imgs = _images(rng, sizes)
    assert_is_detection_model(model, imgs, model.n_fg_class)
    model.use_preset('evaluate')
    bboxes, _, scores = model.predict(imgs)
    assert sum(len(b) for b in bboxes) > 0, 'a random model should give low-score boxes'
    for score in scores:
        assert (numpy.diff(score) <= 0).all() and (score > 0.005).all()


def test_batching_gives_the_same_result(model, rng):
    imgs = _images(rng, [(40, 60), (25, 33), (64, 48)])
    together = model.predict(imgs, batchsize=3)
    alone = [model.predict([img]) for img in imgs]
    for i in range(3):
        for field in range(3):
            numpy.testing.assert_allclose(together[field][i], alone[i][field][0], rtol=1e-5,
                                          atol=1e-4)


def test_input_kinds(model, rng):
    img = _images(rng, [(30, 20)])[0]
    hwc = numpy.round(img).astype(numpy.uint8).transpose(1, 2, 0)
    b_float, _, _ = model.predict([numpy.round(img)])
    b_uint8, _, _ = model.predict([hwc])
    numpy.testing.assert_allclose(b_float[0], b_uint8[0], rtol=1e-5)


def test_thresholds(model, rng):
    imgs = _images(rng, [(40, 60)])
    model.score_thresh, model.nms_thresh = 0.005, 1.0
    bbox_all, _, score_all = model.predict(imgs)
    model.score_thresh = 0.3
    _, _, scores = model.predict(imgs)
    assert len(scores[0]) == (score_all[0] > 0.3).sum()
    model.score_thresh, model.nms_thresh = 0.005, 0.3
    bboxes, labels, _ = model.predict(imgs)
    assert len(bboxes[0]) < len(bbox_all[0])
    # NMS runs before clipping (as Darknet), so check the boxes clipping left alone
    inside = ((bboxes[0] > 0) & (bboxes[0] < [60, 40, 60, 40])).all(axis=1)
    for label in numpy.unique(labels[0]):
        box = bboxes[0][(labels[0] == label) & inside]
        iou = bbox_utils.bbox_iou(box, box)
        assert (iou[~numpy.eye(len(box), dtype=bool)] < 0.3).all()


def test_empty_detections(model, rng):
    model.score_thresh = 1.0
    bboxes, labels, scores = model.predict(_images(rng, [(40, 60), (20, 20)]))
    for bbox, label, score in zip(bboxes, labels, scores):
        assert bbox.shape == (0, 4) and bbox.dtype == numpy.float32
        assert label.shape == (0,) and label.dtype == numpy.int32
        assert score.shape == (0,) and score.dtype == numpy.float32


def test_max_detections(model, rng):
    model.max_detections = 3
    bboxes, _, _ = model.predict(_images(rng, [(40, 60), (50, 30)]))
    assert [len(b) for b in bboxes] == [3, 3]


def test_boxes_scale_with_the_image_size(model, rng):
    x = model.prepare(_images(rng, [(40, 60)])[0])[None]
    outputs = model.forward(x)
    bbox_small, score_small = model.decode(outputs, [(40, 60)])
    bbox_large, score_large = model.decode(outputs, [(80, 180)])
    numpy.testing.assert_allclose(bbox_large, bbox_small * [3, 2, 3, 2], rtol=1e-6)
    numpy.testing.assert_array_equal(score_large, score_small)


def test_n_fg_class_change_remakes_heads(tiny_cfg, weights_writer, tmp_path, rng):
    base = DarknetDetector(tiny_cfg())
    n_value = sum(int(numpy.prod(s)) for _, s in base.network.darknet_blocks())
    path = weights_writer(tmp_path / 'tiny.weights',
                          rng.uniform(0.01, 0.2, n_value).astype(numpy.float32))
    model = DarknetDetector(tiny_cfg(), path, n_fg_class=5)
    loaded = DarknetDetector(tiny_cfg(), path)
    assert model.n_fg_class == 5 and model.label_names is None
    assert model.network.layer9.conv.W.shape == (2 * 10, 24, 1, 1)
    assert model.network.layer14.conv.W.shape == (2 * 10, 32, 1, 1)
    numpy.testing.assert_array_equal(model.network.layer6.conv.W.array,
                                     loaded.network.layer6.conv.W.array)
    assert_is_detection_model(model, _images(rng, [(40, 60), (30, 30)]), 5)


def test_label_names_length_checked(tiny_cfg):
    with pytest.raises(ValueError, match='label_names'):
        DarknetDetector(tiny_cfg(), label_names=['a', 'b', 'c'])
    assert DarknetDetector(tiny_cfg(), label_names=['a', 'b']).label_names == ('a', 'b')


def test_use_preset(tiny_cfg):
    model = DarknetDetector(tiny_cfg())
    assert (model.score_thresh, model.nms_thresh) == (0.25, 0.45)
    model.use_preset('evaluate')
    assert (model.score_thresh, model.nms_thresh) == (0.005, 0.45)
    with pytest.raises(ValueError, match='preset'):
        model.use_preset('fast')


def test_letterbox(tiny_cfg, rng):
    text = tiny_cfg().read_text().replace('[net]\n', '[net]\nletter_box=1\n', 1)
    model = DarknetDetector(tiny_cfg(text, 'letterbox.cfg'))
    assert model.letterbox
    img = rng.uniform(0, 255, (3, 10, 20)).astype(numpy.float32)
    x = model.prepare(img)
    # 20 x 10 into 32 x 32: 32 x 16 centred, rows 8..23, grey 0.5 above and below
    assert x.shape == (3, 32, 32)
    assert (x[:, :8] == 0.5).all() and (x[:, 24:] == 0.5).all()
    offset, scale = model._box_transform([(10, 20)])
    box = (numpy.array([0, 8 / 32, 1, 24 / 32]) - offset[0]) * scale[0]
    numpy.testing.assert_allclose(box, [0, 0, 20, 10])
    model.use_preset('evaluate')
    assert_is_detection_model(model, _images(rng, [(10, 20), (30, 16)]), 2)
