"""SSD300VGG16 (torchvision's SSD300): predict() contract, anchors, preprocessing,
decoding, heads and the zoo entry, on random weights."""

import math

import numpy
import pytest

from cvzoo.core import config
from cvzoo.core.training import reporter as reporter_module
from cvzoo.core.variable import Variable
from cvzoo.models import zoo
from cvzoo.models.detection.ssd import ssd_vgg16_torchvision as tv_ssd
from cvzoo.models.detection.ssd import train_chain
from cvzoo.testing import assert_is_detection_model


@pytest.fixture(scope='module')
def model():
    """One random 3-class model shared by the module's tests."""
    return tv_ssd.SSD300VGG16(n_fg_class=3)


def _imgs(rng, sizes):
    return [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in sizes]


def test_predict_contract_batch_1_and_the_empty_result(model, rng):
    imgs = _imgs(rng, [(240, 320)])
    model.use_preset('evaluate')
    assert_is_detection_model(model, imgs, 3)
    model.score_thresh = 1.0
    try:
        bboxes, labels, scores = model.predict(imgs)
    finally:
        model.use_preset('visualize')
    assert bboxes[0].shape == (0, 4) and labels[0].shape == (0,) and scores[0].shape == (0,)


@pytest.mark.slow
def test_predict_contract_batch_3(model, rng):
    imgs = _imgs(rng, [(240, 320), (300, 200), (64, 96)])
    model.use_preset('evaluate')
    assert_is_detection_model(model, imgs, 3)
    alone = model.predict(imgs[1:2])
    together = model.predict(imgs)
    for bbox, score in zip(together[0], together[2]):
        assert 0 < len(bbox) <= model.max_detections
        assert (numpy.diff(score) <= 0).all() and (score > 0.01).all()
    numpy.testing.assert_allclose(alone[0][0], together[0][1], atol=1e-3)
    numpy.testing.assert_array_equal(alone[1][0], together[1][1])


def test_presets(model):
    model.use_preset('evaluate')
    assert (model.score_thresh, model.nms_thresh) == (0.01, 0.45)
    model.use_preset('visualize')
    assert (model.score_thresh, model.nms_thresh) == (0.6, 0.45)
    assert (model.max_detections, model.nms_top_k) == (200, 400)
    assert not model.inclusive_score_thresh
    with pytest.raises(ValueError, match='preset'):
        model.use_preset('fast')


def test_default_bbox_by_hand():
    # one 2x2 map, step 150 on a 300 input, scales 0.25 and 1.21, aspect ratio 4
    bbox = tv_ssd.default_bbox((2,), ((4,),), (150,), (0.25, 1.21), 300)
    s, s_prime = 75.0, math.sqrt(75 * 363)  # 165
    sides = [(s, s), (s_prime, s_prime), (150, 37.5), (37.5, 150)]
    centers = [(75, 75), (225, 75), (75, 225), (225, 225)]  # x first, row by row
    expected = [center + side for center in centers for side in sides]
    numpy.testing.assert_allclose(bbox, expected, rtol=1e-6)
    assert bbox.dtype == numpy.float32
    # a side above the input (1.21 * 300 * 2 for ratio 4) is clipped to 300
    clipped = tv_ssd.default_bbox((1,), ((4,),), (300,), (1.21, 1.5), 300)
    numpy.testing.assert_allclose(clipped[:, 2:], [[300, 300], [300, 300], [300, 181.5],
                                                   [181.5, 300]], rtol=1e-6)


def test_model_anchors(model):
    anchors = model.coder.default_bbox
    assert anchors.shape == (8732, 4)
    # first map: 38x38 cells of step 8, sizes 21 and sqrt(21 * 45), ratio 2
    numpy.testing.assert_allclose(anchors[:4], [[4, 4, 21, 21],
                                                [4, 4] + [math.sqrt(21 * 45)] * 2,
                                                [4, 4, 21 * math.sqrt(2), 21 / math.sqrt(2)],
                                                [4, 4, 21 / math.sqrt(2), 21 * math.sqrt(2)]],
                                  rtol=1e-6)
    # last map: one cell at the centre, 261 and sqrt(261 * 315); wide/tall clipped to 300
    numpy.testing.assert_allclose(anchors[-4:], [[150, 150, 261, 261],
                                                 [150, 150] + [math.sqrt(261 * 315)] * 2,
                                                 [150, 150, 300, 261 / math.sqrt(2)],
                                                 [150, 150, 261 / math.sqrt(2), 300]],
                                  rtol=1e-6)


def test_prepare_normalises_and_resizes_to_300(model):
    img = numpy.empty((3, 20, 50), numpy.float32)
    img[:] = numpy.array([255.0, 0.0, 100.0])[:, None, None]
    x = model.prepare(img)
    assert x.shape == (3, 300, 300) and x.dtype == numpy.float32
    expected = [(1 - 0.48235) * 255, -0.45882 * 255, (100 / 255 - 0.40784) * 255]
    numpy.testing.assert_allclose(x[:, 150, 150], expected, rtol=1e-5)
    ramp = numpy.tile(numpy.arange(4, dtype=numpy.float32) * 60, (3, 300, 1))
    # half-pixel centres: output column j samples input x = (j + 0.5) * 4 / 300 - 0.5
    out = model.prepare(ramp)[0, 0]
    source = numpy.clip((numpy.arange(300) + 0.5) * 4 / 300 - 0.5, 0, 3)
    numpy.testing.assert_allclose(out, source * 60 - 0.48235 * 255, atol=1e-3)


def test_decode_by_hand(model):
    K = len(model.coder.default_bbox)
    loc = numpy.zeros((2, K, 4), numpy.float32)
    loc[0, 0] = [10, -5, 5 * math.log(2), 50]  # dx 1, dy -0.5, dw log 2, dh clipped
    conf = numpy.zeros((2, K, 4), numpy.float32)
    conf[1, 5] = [0, math.log(2), 0, math.log(3)]
    with config.no_backprop_mode():
        bbox, score = model.decode((Variable(loc), Variable(conf)), [(150, 600), (300, 300)])
    # anchor 0: centre (4, 4), side 21 -> centre (25, -6.5), w 42, h 21 * 1000 / 16
    h = 21 * 1000 / 16
    expected = numpy.clip([25 - 21, -6.5 - h / 2, 25 + 21, -6.5 + h / 2], 0, 300)
    numpy.testing.assert_allclose(bbox[0, 0], expected * [2, 0.5, 2, 0.5], rtol=1e-5)
    # zero offsets give the anchors, clipped to the input and scaled to the image
    numpy.testing.assert_allclose(bbox[1, -4], [19.5, 19.5, 280.5, 280.5], rtol=1e-5)
    assert score.shape == (2, K, 3)
    numpy.testing.assert_allclose(score[1, 5], [2 / 7, 1 / 7, 3 / 7], rtol=1e-6)


def test_unused_classes_enter_the_softmax_only():
    model = tv_ssd.SSD300VGG16(n_fg_class=2)
    model.n_unused_class = 1
    model.multibox.n_class = 4  # NOTE: only decode is used; the heads keep 3 columns
    K = len(model.coder.default_bbox)
    conf = numpy.zeros((1, K, 4), numpy.float32)
    conf[0, :, 3] = math.log(5)
    with config.no_backprop_mode():
        _, score = model.decode((Variable(numpy.zeros((1, K, 4), numpy.float32)),
                                 Variable(conf)), [(300, 300)])
    assert model.n_fg_class == 2 and score.shape == (1, K, 2)
    numpy.testing.assert_allclose(score[0, 0], [1 / 8, 1 / 8], rtol=1e-6)


def test_n_fg_class_builds_the_heads():
    model = tv_ssd.SSD300VGG16(n_fg_class=5)
    assert model.n_fg_class == 5 and model.n_unused_class == 0
    assert model.multibox.conf[0].W.shape == (4 * 6, 512, 3, 3)
    assert model.multibox.conf[1].b.shape == (6 * 6,)
    assert model.multibox.loc[5].W.shape == (4 * 4, 256, 3, 3)
    assert model.extractor.norm4.eps == tv_ssd.NORMALIZE_EPS
    model.reset_multibox(2)
    assert model.n_fg_class == 2 and model.multibox.conf[0].b.shape == (4 * 3,)
    assert tv_ssd.SSD300VGG16().n_fg_class == 80


@pytest.mark.parametrize('kwargs, message', [({'n_fg_class': 0}, 'n_fg_class'),
                                             ({'n_fg_class': 2.0}, 'n_fg_class'),
                                             ({'pretrained_model': 'voc'}, 'pretrained_model')],
                         ids=['zero', 'float', 'key'])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tv_ssd.SSD300VGG16(**kwargs)


def test_targets_use_the_torchvision_anchors(model):
    # a box equal to an anchor of the last map matches it (IoU 1) with zero offsets
    center_size = model.coder.default_bbox[-4]
    box = numpy.concatenate((center_size[:2] - center_size[2:] / 2,
                             center_size[:2] + center_size[2:] / 2))[None]
    mb_loc, mb_label = model.coder.encode(box, numpy.array([2], numpy.int32))
    assert mb_label[-4] == 3 and set(numpy.unique(mb_label)) == {0, 3}
    numpy.testing.assert_allclose(mb_loc[-4], 0, atol=1e-5)


@pytest.mark.slow
def test_train_chain_loss_and_gradients(rng):
    model = tv_ssd.SSD300VGG16(n_fg_class=2)
    chain = train_chain.SSDTrainChain(model)
    img = model.prepare(_imgs(rng, [(200, 250)])[0])[None]
    gt_mb_loc, gt_mb_label = model.coder.encode(
        numpy.array([[30, 40, 200, 180], [100, 10, 290, 120]], numpy.float32),
        numpy.array([0, 1], numpy.int32))
    reporter = reporter_module.Reporter()
    reporter.add_observer('main', chain)
    with reporter.scope({}):
        loss = chain(img, gt_mb_loc[None], gt_mb_label[None])
    assert loss.shape == () and numpy.isfinite(loss.array) and float(loss.array) > 0
    chain.cleargrads()
    loss.backward()
    missing = [name for name, param in chain.namedparams()
               if param.grad is None or not numpy.isfinite(param.grad).all()]
    assert missing == []


def test_zoo_entry():
    assert 'ssd300_vgg16' in zoo.list_models('detection')
    assert zoo.get_model_class('ssd300_vgg16') is tv_ssd.SSD300VGG16
    info = zoo.model_info('ssd300_vgg16')
    coco = info['weights']['coco']
    assert coco['reported']['value'] == 0.251 and coco['reported']['metric'] == 'map_coco'
    assert coco['url'].endswith('ssd300_vgg16_coco-b556d3b4.pth')
    assert coco['sha256'] == 'b556d3b4' and coco['n_class'] == 80
    entry = tv_ssd.SSD300VGG16.weights['coco']
    assert zoo.schema_problems(entry) == []
    assert entry.preset.mean == pytest.approx((122.99925, 116.9991, 103.9992))

