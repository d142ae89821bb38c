"""Tests of FasterRCNNFPNResNet50/101: predict() contract, levels, weight conversion."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.models import zoo
from cvzoo.models.detection import box_coding, fpn
from cvzoo.models.detection.faster_rcnn.fpn import bbox_head, faster_rcnn_fpn_resnet
from cvzoo.testing import assert_is_detection_model

_LOC_KEYS = ('rpn/loc/W', 'rpn/loc/b', 'head/loc/W', 'head/loc/b')


def _image(H, W, seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3, H, W)).astype(numpy.float32)


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)
    return faster_rcnn_fpn_resnet.FasterRCNNFPNResNet50(n_fg_class=3, min_size=64,
                                                        max_size=96)


@pytest.mark.parametrize('sizes', [[(50, 70)], [(50, 70), (80, 40), (33, 33)]],
                         ids=['batch1', 'batch3'])
def test_predict_contract(model, sizes):
    model.use_preset('evaluate')
    imgs = [_image(H, W, i) for i, (H, W) in enumerate(sizes)]
    assert_is_detection_model(model, imgs, 3)


def test_batch_is_padded_to_multiples_of_32(model):
    x = model.pad_batch([model.prepare(_image(50, 70)), model.prepare(_image(70, 50))])
    assert x.shape == (2, 3, 96, 96)
    assert (x[0, :, 64:] == 0).all()


def test_rois_are_mapped_back_by_the_exact_resize_factor(model):
    # 50 x 70 goes to 64 x 89.6, stored 64 x 89: ChainerCV's FPN divides by 64 / 50 = 1.28,
    # not by 89 / 70 (its VGG16 FasterRCNN's rule, which cvzoo's keeps).
    imgs = [_image(50, 70), _image(70, 50)]
    prepared = [model.prepare(img) for img in imgs]
    assert prepared[0].shape[1:] == (64, 89)
    assert model.input_scales([(50, 70), (70, 50)], prepared) == [1.28, 1.28]


def test_empty_detections(model):
    # FPN keeps scores equal to the threshold, as ChainerCV, and random weights score some
    # boxes 1.0: a threshold above 1, written past the [0, 1] check, keeps none
    object.__setattr__(model, 'score_thresh', 1.01)
    bboxes, _, scores = model.predict([_image(40, 60), _image(64, 64)])
    assert [len(b) for b in bboxes] == [0, 0]
    assert bboxes[0].shape == (0, 4) and scores[1].dtype == numpy.float32
    model.use_preset('visualize')
    assert (model.score_thresh, model.nms_thresh) == (0.7, 0.5)


def test_rois_go_to_the_level_of_their_size():
    head = bbox_head.FPNBboxHead(2, fpn.FPN_SCALES)
    side = numpy.array([10, 111, 112, 224, 447, 448, 900, 5000], numpy.float32)
    rois = numpy.stack((numpy.zeros_like(side),) * 2 + (side, side), axis=1)
    # floor(log2(side / 224)) + 2, clipped to [0, 3] (the 1/64 level only serves the RPN)
    numpy.testing.assert_array_equal(head.distribute(rois), [0, 0, 1, 2, 2, 3, 3, 3])


def _chainercv_file(model, path):
    arrays = model.state_arrays()
    for key in _LOC_KEYS:
        arrays[key] = box_coding.swap_xy_channels(arrays[key])
    # ChainerCV's later files call the head 'bbox_head'
    arrays = {('bbox_' + key if key.startswith('head/') else key): value
              for key, value in arrays.items()}
    numpy.savez(path, **arrays)
    return arrays


def test_load_chainercv_file_with_another_class_count(model, tmp_path):
    path = tmp_path / 'faster_rcnn_fpn_resnet50_coco.npz'
    _chainercv_file(model, path)
    numpy.random.seed(1)
    other = faster_rcnn_fpn_resnet.FasterRCNNFPNResNet50(
        n_fg_class=5, pretrained_model=str(path), min_size=64, max_size=96,
        source='chainercv')
    assert other.n_fg_class == 5 and other.head.conf.W.shape == (6, 1024)
    own, loaded = model.state_arrays(), other.state_arrays()
    for key in ('extractor/base/res3/a/conv1/conv/W', 'extractor/base/conv1/bn/avg_var',
                'extractor/inner/0/W', 'rpn/loc/W', 'rpn/loc/b', 'head/fc2/W'):
        numpy.testing.assert_array_equal(loaded[key], own[key], err_msg=key)


def test_convert_consumes_every_key_and_names_leftovers(model, tmp_path):
    arrays = _chainercv_file(model, tmp_path / 'unused.npz')
    converted = model.convert_weights(arrays, 'chainercv')
    assert sorted(converted) == sorted(model.state_arrays())
    numpy.testing.assert_array_equal(converted['head/loc/W'], model.head.loc.W.array)
    arrays['extractor/lateral/0/W'] = numpy.zeros(1, numpy.float32)
    arrays['mask_head/conv1/W'] = numpy.zeros(1, numpy.float32)
    with pytest.raises(errors.WeightLoadError) as info:
        model.convert_weights(arrays, 'chainercv')
    assert 'extractor/lateral/0/W' in str(info.value) and 'mask_head/conv1/W' in str(info.value)


def test_convert_imagenet_resnet_fills_the_base(model):
    own = model.state_arrays()
    raw = {key.removeprefix('extractor/base/'): value for key, value in own.items()
           if key.startswith('extractor/base/')}
    raw['fc6/W'] = numpy.zeros((1000, 2048), numpy.float32)
    raw['fc6/b'] = numpy.zeros(1000, numpy.float32)
    converted = model.convert_weights(raw, 'chainercv')
    assert sorted(converted) == sorted(own)


def test_weights_entries():
    for cls, percent in ((faster_rcnn_fpn_resnet.FasterRCNNFPNResNet50, 0.371),
                         (faster_rcnn_fpn_resnet.FasterRCNNFPNResNet101, 0.395)):
        for key, entry in cls.weights.items():
            assert zoo.schema_problems(entry) == [], (cls, key)
        assert cls.weights['coco'].reported.value == pytest.approx(percent)
        assert cls.weights['coco'].n_class == 80
    assert {'faster_rcnn_fpn_resnet50', 'faster_rcnn_fpn_resnet101'} <= set(
        zoo.list_models('detection'))
