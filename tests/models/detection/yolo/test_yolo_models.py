"""YOLOv2, YOLOv2Tiny, YOLOv3: predict() contract, both preprocessings, heads, entries."""

import numpy
import pytest

from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.detection.darknet import cfg_network
from cvzoo.models.detection.yolo import yolo_sections
from cvzoo.models.detection.yolo.yolo_v2 import YOLOv2, YOLOv2Tiny
from cvzoo.models.detection.yolo.yolo_v3 import YOLOv3
from cvzoo.testing import assert_is_detection_model

CLASSES = {'yolov2': YOLOv2, 'yolov2_tiny': YOLOv2Tiny, 'yolov3': YOLOv3}
_CACHE = {}


def _model(name):
    """One random-weight model per class for the whole module (YOLOv3 takes ~3 s)."""
    if name not in _CACHE:
        _CACHE[name] = CLASSES[name]()
    model = _CACHE[name]
    model.insize = (96, 128)  # fully convolutional; a small input keeps the tests fast
    model.preprocessing = 'darknet'
    model.use_preset('evaluate')
    return model


def _images(rng, sizes):
    return [rng.uniform(0, 255, (3, H, W)).astype(numpy.float32) for H, W in sizes]


_BATCH1, _BATCH3 = [(60, 90)], [(60, 90), (150, 70), (96, 128)]
_SLOW = pytest.mark.slow


@pytest.mark.parametrize('name, sizes, preprocessing', [
    ('yolov2_tiny', _BATCH1, 'darknet'), ('yolov2_tiny', _BATCH3, 'darknet'),
    ('yolov2_tiny', _BATCH1, 'chainercv'), ('yolov2_tiny', _BATCH3, 'chainercv'),
    ('yolov2', _BATCH3, 'chainercv'), ('yolov3', _BATCH1, 'darknet'),
    pytest.param('yolov2', _BATCH1, 'darknet', marks=_SLOW),
    pytest.param('yolov3', _BATCH3, 'chainercv', marks=_SLOW)],
    ids=['tiny-batch1-darknet', 'tiny-batch3-darknet', 'tiny-batch1-chainercv',
         'tiny-batch3-chainercv', 'v2-batch3-chainercv', 'v3-batch1-darknet',
         'v2-batch1-darknet', 'v3-batch3-chainercv'])
def test_contract(rng, name, sizes, preprocessing):
    model = _model(name)
    model.preprocessing = preprocessing
    imgs = _images(rng, sizes)
    assert_is_detection_model(model, imgs, 20)
    model.use_preset('evaluate')
    bboxes, _, scores = model.predict(imgs)
    assert sum(len(b) for b in bboxes) > 0
    for score in scores:
        assert (numpy.diff(score) <= 0).all() and (score > 0.005).all()


def test_presets():
    model = _model('yolov2_tiny')
    model.use_preset('visualize')
    assert (model.score_thresh, model.nms_thresh) == (0.5, 0.45)
    model.use_preset('evaluate')
    assert (model.score_thresh, model.nms_thresh) == (0.005, 0.45)
    assert model.use_07_metric


def test_empty_detection(rng):
    model = _model('yolov2_tiny')
    model.score_thresh = 1.0
    bboxes, labels, scores = model.predict(_images(rng, [(50, 60)]))
    assert bboxes[0].shape == (0, 4) and labels[0].shape == (0,) and scores[0].shape == (0,)


def test_head_shapes():
    model = _model('yolov3')
    x = numpy.zeros((1, 3, 96, 128), numpy.float32)
    with config.using_config('train', False), config.no_backprop_mode():
        maps = model(x)
    assert [m.shape for m in maps] == [(1, 75, 3, 4), (1, 75, 6, 8), (1, 75, 12, 16)]
    x = numpy.zeros((2, 3, 64, 96), numpy.float32)
    with config.using_config('train', False), config.no_backprop_mode():
        raw, = _model('yolov2')(x)
    assert raw.shape == (2, 125, 2, 3)


def test_yolov3_coco_matches_the_size_of_yolov3_weights():
    # pjreddie's yolov3.weights is 248007048 bytes: a 20-byte header and 62001757 floats
    network = cfg_network.CfgNetwork(yolo_sections.yolov3_sections(80, (608, 608)))
    n_value = sum(int(numpy.prod(shape)) for _, shape in network.darknet_blocks())
    assert 20 + 4 * n_value == 248007048


def test_n_fg_class_remakes_heads():
    model = YOLOv2Tiny(n_fg_class=3)
    assert model.n_fg_class == 3 and model.network.heads[0]['n_class'] == 3
    head_conv = model.network.layers[model.network.heads[0]['index'] - 1]
    assert head_conv.conv.W.shape[0] == 5 * (5 + 3)
    with pytest.raises(ValueError, match='n_fg_class'):
        YOLOv2Tiny(n_fg_class=0)


def test_chainercv_geometry_by_hand():
    """A hand-decoded box: cell (0, 0), anchor 0, all raw values 0, image 208x312."""
    model = _model('yolov2')
    model.insize = (416, 416)
    model.preprocessing = 'chainercv'
    raw = numpy.zeros((1, 125, 13, 13), numpy.float32)

    class Raw:
        array = raw

    bbox, score = model.decode([Raw()], [(208, 312)])
    # no upscaling: the image sits at x 52..364, y 104..312 of the 416x416 canvas
    center = 0.5 * 32
    half_w, half_h = 1.3221 * 32 / 2, 1.73145 * 32 / 2
    expected = [center - half_w - 52, center - half_h - 104, center + half_w - 52,
                center + half_h - 104]
    numpy.testing.assert_allclose(bbox[0, 0], expected, rtol=1e-5)
    numpy.testing.assert_allclose(score[0, 0], numpy.full(20, 0.5 / 20), rtol=1e-5)


def test_darknet_geometry_by_hand():
    """Letterbox: a 208x312 image is scaled to 277x416 at y offset 69."""
    model = _model('yolov2')
    model.insize = (416, 416)
    raw = numpy.zeros((1, 125, 13, 13), numpy.float32)

    class Raw:
        array = raw

    bbox, _ = model.decode([Raw()], [(208, 312)])
    scale = 312 / 416
    center_x, center_y = 16, (16 - (416 - 277) / 2) * (208 / 277)
    half_w, half_h = 1.3221 * 32 / 2 * scale, 1.73145 * 32 / 2 * (208 / 277)
    numpy.testing.assert_allclose(
        bbox[0, 0], [center_x * scale - half_w, center_y - half_h, center_x * scale + half_w,
                     center_y + half_h], rtol=1e-5)


@pytest.mark.parametrize('name, key', [(name, key) for name, cls in CLASSES.items()
                                       for key in cls.weights])
def test_entries_follow_the_schema(name, key):
    entry = CLASSES[name].weights[key]
    assert zoo.schema_problems(entry) == []
    assert entry.convert_from in ('chainercv', 'darknet')
    backend = {'chainercv': 'cv2', 'darknet': 'darknet'}[entry.convert_from]
    assert entry.preset.resize_backend == backend
    assert zoo.list_models('detection').count(name) == 1
