"""Tests of FasterRCNNVGG16: predict() contract, thresholds, weight conversion."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.models import zoo
from cvzoo.models.detection import box_coding
from cvzoo.models.detection.faster_rcnn import faster_rcnn_vgg
from cvzoo.testing import assert_is_detection_model


def _image(H, W, seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3, H, W)).astype(numpy.float32)


@pytest.fixture(scope='module')
def model():
    # NOTE: one model per module: fc6 alone has 100M parameters (about 10 s to initialise)
    numpy.random.seed(0)
    return faster_rcnn_vgg.FasterRCNNVGG16(
        n_fg_class=3, min_size=64, max_size=96, anchor_scales=(1, 2),
        proposal_creator_params={'min_size': 2, 'n_test_pre_nms': 200, 'n_test_post_nms': 30})


@pytest.mark.parametrize('sizes', [[(50, 70)], [(50, 70), (80, 40), (33, 33)]],
                         ids=['batch1', 'batch3'])
def test_predict_contract(model, sizes):
    model.use_preset('evaluate')
    model.score_thresh = 0.2  # random weights: every class scores about 1 / 4
    imgs = [_image(H, W, i) for i, (H, W) in enumerate(sizes)]
    assert_is_detection_model(model, imgs, 3)


def test_prepare_resizes_shorter_side_within_max(model):
    assert model.prepare(_image(50, 70)).shape == (3, 64, 89)
    assert model.prepare(_image(30, 120)).shape == (3, 24, 96)  # longer side capped


def test_thresholds(model):
    imgs = [_image(60, 80, 5), _image(45, 50, 6)]
    model.nms_thresh = 0.3
    model.score_thresh = 1.0
    bboxes, labels, _ = model.predict(imgs)
    assert all(len(bbox) == 0 for bbox in bboxes)
    assert all(label.dtype == numpy.int32 and label.shape == (0,) for label in labels)
    model.score_thresh = 0.0
    loose = model.predict(imgs)
    model.nms_thresh = 1.0
    no_nms = model.predict(imgs)
    for i in range(2):
        assert 0 < len(loose[0][i]) <= len(no_nms[0][i])
        assert numpy.all(numpy.diff(loose[2][i]) <= 0)


def test_batch_matches_single_images(model):
    model.use_preset('evaluate')
    model.score_thresh = 0.2
    imgs = [_image(50, 70, 1), _image(70, 50, 2)]
    together = model.predict(imgs)
    for i, img in enumerate(imgs):
        alone = model.predict([img])
        numpy.testing.assert_allclose(together[0][i], alone[0][0], rtol=1e-5, atol=1e-4)
        numpy.testing.assert_array_equal(together[1][i], alone[1][0])


def test_reset_head_changes_the_class_count(model):
    head = model.head
    old_fc7 = head.fc7.W.array
    model.reset_head(5)
    try:
        assert model.n_fg_class == 5 and head.score.W.shape == (6, 4096)
        assert head.cls_loc.W.shape == (24, 4096) and head.fc7.W.array is old_fc7
        _, labels, _ = model.predict([_image(40, 40)])
        assert labels[0].max(initial=0) < 5
    finally:
        model.reset_head(3)
    with pytest.raises(ValueError, match='n_fg_class'):
        model.reset_head(0)


def _chainercv_arrays(model):
    """The model's arrays as ChainerCV would store them (y-first offset layers)."""
    arrays = model.state_arrays()
    for key in ('rpn/loc/W', 'rpn/loc/b', 'head/cls_loc/W', 'head/cls_loc/b'):
        arrays[key] = box_coding.swap_xy_channels(arrays[key])
    return {'/' + key: value for key, value in arrays.items()}


def test_convert_chainercv_consumes_everything_and_permutes(model):
    raw = _chainercv_arrays(model)
    converted = model.convert_weights(raw, 'chainercv')
    own = model.state_arrays()
    assert sorted(converted) == sorted(own)
    for key, value in own.items():
        numpy.testing.assert_array_equal(converted[key], value, err_msg=key)


def test_loc_permutation_hand_built(model):
    raw = _chainercv_arrays(model)
    n_class = model.head.n_class
    # ChainerCV's (dy, dx, dh, dw) = (1, 2, 3, 4) for every class
    raw['/head/cls_loc/b'] = numpy.tile(numpy.float32([1, 2, 3, 4]), n_class)
    raw['/rpn/loc/b'] = numpy.tile(numpy.float32([1, 2, 3, 4]), 4)
    converted = model.convert_weights(raw, 'chainercv')
    numpy.testing.assert_array_equal(converted['head/cls_loc/b'][:8], [2, 1, 4, 3, 2, 1, 4, 3])
    numpy.testing.assert_array_equal(converted['rpn/loc/b'][:4], [2, 1, 4, 3])
    cvzoo_named = model.convert_weights(raw, 'cvzoo')  # cvzoo files are not permuted
    numpy.testing.assert_array_equal(cvzoo_named['rpn/loc/b'][:4], [1, 2, 3, 4])


def test_convert_names_every_unknown_key(model):
    raw = _chainercv_arrays(model)
    raw['/head/fc9/W'] = numpy.zeros(3, numpy.float32)
    raw['/extractor/conv6_1/conv/b'] = numpy.zeros(3, numpy.float32)
    with pytest.raises(errors.WeightLoadError) as info:
        model.convert_weights(raw, 'chainercv')
    assert 'head/fc9/W' in str(info.value) and 'extractor/conv6_1/conv/b' in str(info.value)
    with pytest.raises(ValueError, match='source'):
        model.convert_weights(raw, 'torch')


def test_convert_imagenet_classifier_fills_the_backbone(model):
    own = model.state_arrays()
    raw = {key.removeprefix('extractor/'): value + 1 for key, value in own.items()
           if key.startswith('extractor/')}
    raw.update({'fc6/W': own['head/fc6/W'], 'fc6/b': own['head/fc6/b'] + 1,
                'fc7/W': own['head/fc7/W'], 'fc7/b': own['head/fc7/b'],
                'fc8/W': numpy.zeros((1000, 4096), numpy.float32),
                'fc8/b': numpy.zeros(1000, numpy.float32)})
    converted = model.convert_weights(raw, 'chainercv')
    assert sorted(converted) == sorted(own)
    numpy.testing.assert_array_equal(converted['extractor/conv1_1/conv/W'],
                                     own['extractor/conv1_1/conv/W'] + 1)
    numpy.testing.assert_array_equal(converted['head/fc6/b'], own['head/fc6/b'] + 1)
    numpy.testing.assert_array_equal(converted['rpn/conv1/W'], own['rpn/conv1/W'])


def test_weights_entries():
    cls = faster_rcnn_vgg.FasterRCNNVGG16
    for key, entry in cls.weights.items():
        assert zoo.schema_problems(entry) == [], key
    assert cls.weights['voc07'].url.endswith('faster_rcnn_vgg16_voc07_trained_2018_06_01.npz')
    assert cls.weights['voc0712'].reported.value == pytest.approx(0.747)
    assert 'faster_rcnn_vgg16' in zoo.list_models('detection')
