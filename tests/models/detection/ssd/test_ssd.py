"""SSD300/SSD512/SSDTiny: predict() contract, presets, heads, ChainerCV weights, equivalence.

The equivalence test here needs nothing but NumPy: an independent re-implementation of
ChainerCV's post-processing, written in ChainerCV's own y-first conventions (anchors
(cy, cx, h, w) built by loops, loc (dy, dx, dh, dw), a greedy NMS loop per class), fed
with the network outputs after the ChainerCV channel order is restored. The comparison
with ChainerCV 0.13.1 itself, in its own environment, is test_chainercv_reference.py.
"""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.core.serializers import dictionary
from cvzoo.models.detection import box_coding
from cvzoo.models.detection.ssd import ssd, ssd_tiny
from cvzoo.testing import assert_is_detection_model


def _image(H, W, seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3, H, W)).astype(numpy.float32)


@pytest.fixture(scope='module')
def ssd300():
    return ssd.SSD300(n_fg_class=5)


@pytest.fixture(scope='module')
def tiny():
    model = ssd_tiny.SSDTiny(n_fg_class=4)
    for head in list(model.multibox.conf) + list(model.multibox.loc):
        head.W.array *= 0.1  # NOTE: smaller random outputs give varied scores and boxes
    return model


def test_ssd300_predict_contract(ssd300):
    assert len(ssd300.coder.default_bbox) == 8732 and ssd300.insize == 300
    ssd300.use_preset('evaluate')
    ssd300.score_thresh = 0.3
    assert_is_detection_model(ssd300, [_image(200, 150)], n_fg_class=5)
    assert ssd300.score_thresh == 0.01  # the contract check ends with 'evaluate'


@pytest.mark.slow
def test_ssd300_predict_two_sizes_batch_three(ssd300):
    ssd300.use_preset('visualize')
    imgs = [_image(375, 500, 1), _image(240, 320, 2), _image(375, 500, 3)]
    assert_is_detection_model(ssd300, imgs, n_fg_class=5)
    bboxes, _, _ = ssd300.predict(imgs[:1])
    numpy.testing.assert_allclose(bboxes[0], ssd300.predict(imgs)[0][0], atol=1e-3)


@pytest.mark.slow
def test_ssd512_anchors_and_maps():
    model = ssd.SSD512(n_fg_class=2)
    assert len(model.coder.default_bbox) == 24564 and model.insize == 512
    with config.using_config('train', False), config.no_backprop_mode():
        mb_locs, mb_confs = model(numpy.zeros((1, 3, 512, 512), numpy.float32))
    assert mb_locs.shape == (1, 24564, 4) and mb_confs.shape == (1, 24564, 3)


def test_presets_are_chainercv_s(tiny):
    tiny.use_preset('visualize')
    assert (tiny.score_thresh, tiny.nms_thresh) == (0.6, 0.45)
    tiny.use_preset('evaluate')
    assert (tiny.score_thresh, tiny.nms_thresh) == (0.01, 0.45)
    assert tiny.max_detections == 200
    with pytest.raises(ValueError, match='preset'):
        tiny.use_preset('fast')


@pytest.mark.parametrize('sizes', [[(60, 80)], [(60, 80), (120, 90), (96, 96)]],
                         ids=['batch1', 'batch3'])
def test_tiny_predict_contract(tiny, sizes):
    tiny.use_preset('evaluate')
    imgs = [_image(H, W, i) for i, (H, W) in enumerate(sizes)]
    assert_is_detection_model(tiny, imgs, n_fg_class=4)
    scores = tiny.predict(imgs)[2]
    assert all(len(score) <= 200 for score in scores)
    assert all((numpy.diff(score) <= 0).all() for score in scores)


def test_thresholds_and_empty_detections(tiny):
    imgs = [_image(70, 90)]
    tiny.use_preset('evaluate')
    tiny.score_thresh = 0.2
    _, _, scores = tiny.predict(imgs)
    assert len(scores[0]) > 0 and (scores[0] > 0.2).all()
    tiny.score_thresh = 1.0
    bboxes, labels, scores = tiny.predict(imgs)
    assert bboxes[0].shape == (0, 4) and labels[0].shape == (0,) and scores[0].shape == (0,)
    tiny.score_thresh, tiny.nms_thresh = 0.01, 1.0
    tiny.max_detections = None
    try:
        many = tiny.predict(imgs)[2][0]
        tiny.nms_thresh = 0.1
        assert len(tiny.predict(imgs)[2][0]) < len(many)
    finally:
        del tiny.max_detections


def test_n_fg_class_change_remakes_heads_only():
    model = ssd_tiny.SSDTiny(n_fg_class=4)
    extractor_W = model.extractor.conv1_1.conv.W.array.copy()
    model.reset_multibox(2)
    assert model.n_fg_class == 2 and model.multibox.conf[0].W.shape[0] == 4 * 3
    assert (model.extractor.conv1_1.conv.W.array == extractor_W).all()
    with pytest.raises(ValueError, match='n_fg_class'):
        model.reset_multibox(0)


def _chainercv_arrays(model):
    """The model's arrays under ChainerCV's names: no anchors, loc heads (y, x, h, w)."""
    serializer = dictionary.DictionarySerializer()
    model.serialize(serializer)
    arrays = {key.removeprefix('/'): value for key, value in serializer.target.items()}
    del arrays['coder/default_bbox']
    for key in [k for k in arrays if k.startswith('multibox/loc/')]:
        arrays[key] = box_coding.swap_xy_channels(arrays[key])
    return arrays


def test_loc_channels_are_permuted_from_chainercv(tmp_path):
    source = ssd_tiny.SSDTiny(n_fg_class=2)
    arrays = _chainercv_arrays(source)
    for key in [k for k in arrays if k.startswith('multibox/loc/')]:
        arrays[key] = numpy.zeros_like(arrays[key])
        if key.endswith('/b'):  # ChainerCV order per anchor: (dy, dx, dh, dw) = (1, 0, 0, 0)
            arrays[key].reshape(-1, 4)[:, 0] = 1
    path = tmp_path / 'chainercv_tiny.npz'
    numpy.savez(path, **{'/' + key: value for key, value in arrays.items()})
    model = ssd_tiny.SSDTiny(n_fg_class=2, pretrained_model=str(path))
    with config.using_config('train', False), config.no_backprop_mode():
        mb_locs, _ = model(numpy.zeros((1, 3, 96, 96), numpy.float32))
    numpy.testing.assert_array_equal(mb_locs.array[0], numpy.tile([0, 1, 0, 0], (772, 1)))
    anchor = model.coder.default_bbox
    expected = numpy.concatenate((anchor[:, :2] - anchor[:, 2:] / 2,
                                  anchor[:, :2] + anchor[:, 2:] / 2), axis=1)
    expected[:, [1, 3]] += 0.1 * anchor[:, 3:4]  # moved down by v0 * h
    numpy.testing.assert_allclose(model.coder.decode_bbox(mb_locs.array)[0], expected,
                                  rtol=1e-5, atol=1e-4)


@pytest.fixture(scope='module')
def ssd300_chainercv_file(ssd300, tmp_path_factory):
    path = tmp_path_factory.mktemp('ssd300') / 'ssd300_chainercv.npz'
    numpy.savez(path, **_chainercv_arrays(ssd300))
    return path


def test_ssd300_loads_a_chainercv_file(ssd300, ssd300_chainercv_file):
    with numpy.load(ssd300_chainercv_file) as npz:
        names = set(npz.files)
    assert {'extractor/conv1_1/W', 'extractor/norm4/scale', 'extractor/conv6/W',
            'extractor/conv11_2/b', 'multibox/loc/0/W', 'multibox/conf/5/b'} <= names
    assert ssd300.extractor.conv6.W.shape == (1024, 512, 3, 3)
    model = ssd.SSD300(n_fg_class=5, pretrained_model=str(ssd300_chainercv_file))
    for (name, param), (_, original) in zip(model.namedparams(), ssd300.namedparams()):
        numpy.testing.assert_array_equal(param.array, original.array, err_msg=name)


def test_wrong_chainercv_file_names_every_bad_key(ssd300_chainercv_file, tmp_path):
    with numpy.load(ssd300_chainercv_file) as npz:
        arrays = dict(npz)
    del arrays['extractor/conv3_2/b']
    arrays['extractor/conv5_4/W'] = numpy.zeros((1,), numpy.float32)
    arrays['extractor/norm4/scale'] = numpy.zeros((256,), numpy.float32)
    path = tmp_path / 'broken.npz'
    numpy.savez(path, **arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        ssd.SSD300(n_fg_class=5, pretrained_model=str(path))
    message = str(info.value)
    for key in ('extractor/conv3_2/b', 'extractor/conv5_4/W', 'extractor/norm4/scale'):
        assert key in message


def test_n_fg_class_differing_from_a_file_keeps_the_extractor(ssd300, ssd300_chainercv_file):
    model = ssd.SSD300(n_fg_class=5, pretrained_model=str(ssd300_chainercv_file))
    model.reset_multibox(2)
    assert model.multibox.conf[1].W.shape == (6 * 3, 1024, 3, 3)
    numpy.testing.assert_array_equal(model.extractor.conv7.W.array,
                                     ssd300.extractor.conv7.W.array)


def test_backbone_file_fills_the_rest(tmp_path):
    model = ssd_tiny.SSDTiny(n_fg_class=2)
    arrays = {key: value for key, value in _chainercv_arrays(model).items()
              if key.startswith('extractor/conv1')}
    converted = model.convert_weights(arrays, 'chainercv')
    assert 'multibox/conf/0/W' in converted and 'coder/default_bbox' in converted
    with pytest.raises(ValueError, match='source'):
        model.convert_weights(arrays, 'torchvision')


def test_zoo_entries():
    from cvzoo.models import zoo

    for cls in (ssd.SSD300, ssd.SSD512):
        for key, entry in cls.weights.items():
            assert zoo.schema_problems(entry) == [], (cls, key)
    assert ssd.SSD300.weights['voc0712'].url.endswith('ssd300_voc0712_converted_2017_06_06.npz')
    assert ssd.SSD512.weights['voc0712'].reported.value == pytest.approx(0.797)
    assert set(zoo.list_models('detection')) >= {'ssd300', 'ssd512', 'ssd_tiny'}


# --- independent reference of ChainerCV's post-processing (y-first) ---

def _chainercv_anchors(grids, aspect_ratios, steps, sizes):
    anchors = []
    for k, grid in enumerate(grids):
        for v in range(grid):
            for u in range(grid):
                cy, cx, s = (v + 0.5) * steps[k], (u + 0.5) * steps[k], sizes[k]
                anchors.append((cy, cx, s, s))
                big = numpy.sqrt(sizes[k] * sizes[k + 1])
                anchors.append((cy, cx, big, big))
                for ratio in aspect_ratios[k]:
                    anchors.append((cy, cx, s / numpy.sqrt(ratio), s * numpy.sqrt(ratio)))
                    anchors.append((cy, cx, s * numpy.sqrt(ratio), s / numpy.sqrt(ratio)))
    return numpy.array(anchors)


def _greedy_nms(bbox, score, thresh):
    kept = []
    for i in numpy.argsort(-score, kind='stable'):
        ok = True
        for j in kept:
            top_left = numpy.maximum(bbox[i, :2], bbox[j, :2])
            bottom_right = numpy.minimum(bbox[i, 2:], bbox[j, 2:])
            inter = numpy.prod(numpy.clip(bottom_right - top_left, 0, None))
            area = numpy.prod(bbox[i, 2:] - bbox[i, :2]) + numpy.prod(bbox[j, 2:] - bbox[j, :2])
            ok = ok and inter / (area - inter) < thresh
        if ok:
            kept.append(i)
    return kept


def _chainercv_decode(loc_yx, conf, anchors, nms_thresh, score_thresh):
    center = anchors[:, :2] + loc_yx[:, :2] * 0.1 * anchors[:, 2:]
    size = anchors[:, 2:] * numpy.exp(loc_yx[:, 2:] * 0.2)
    bbox = numpy.concatenate((center - size / 2, center + size / 2), axis=1)  # y-first
    prob = numpy.exp(conf) / numpy.exp(conf).sum(axis=1, keepdims=True)
    results = []
    for label in range(conf.shape[1] - 1):
        score = prob[:, label + 1]
        mask = score >= score_thresh
        for i in _greedy_nms(bbox[mask], score[mask], nms_thresh):
            results.append((bbox[mask][i], label, score[mask][i]))
    return results


def test_post_processing_matches_chainercv_reference(tiny):
    tiny.use_preset('evaluate')
    tiny.score_thresh = 0.6
    img = _image(80, 120, 7)
    bboxes, labels, scores = tiny.predict([img])
    with config.using_config('train', False), config.no_backprop_mode():
        mb_locs, mb_confs = tiny(tiny.prepare(img)[None])
    settings = {'grids': tiny.extractor.grids, 'aspect_ratios': tiny.multibox.aspect_ratios}
    anchors = _chainercv_anchors(settings['grids'], settings['aspect_ratios'],
                                 [96 / g for g in settings['grids']],
                                 [96 * f for f in (0.1, 0.25, 0.45, 0.7, 0.95)])
    loc_yx = mb_locs.array[0].astype(numpy.float64)[:, [1, 0, 3, 2]]
    reference = _chainercv_decode(loc_yx, mb_confs.array[0].astype(numpy.float64), anchors,
                                  0.45, 0.6)
    reference.sort(key=lambda r: -r[2])
    reference = reference[:200]  # NOTE: cvzoo keeps the 200 best per image (Caffe's top-k)
    assert 0 < len(reference) == len(scores[0])
    scale = numpy.array([80, 120, 80, 120]) / 96
    expected_bbox = numpy.array([r[0] for r in reference]) * scale
    expected_bbox = numpy.clip(expected_bbox[:, [1, 0, 3, 2]], 0, [120, 80, 120, 80])
    numpy.testing.assert_allclose(scores[0], [r[2] for r in reference], rtol=1e-5)
    numpy.testing.assert_array_equal(labels[0], [r[1] for r in reference])
    numpy.testing.assert_allclose(bboxes[0], expected_bbox, rtol=1e-4, atol=1e-3)
