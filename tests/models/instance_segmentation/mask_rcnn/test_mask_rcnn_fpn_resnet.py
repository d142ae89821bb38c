"""MaskRCNNFPNResNet50/101: predict() contract, masks of the detections' classes, weights
from a ChainerCV-layout file through the zoo key, re-made heads, devices."""

import warnings

import numpy
import pytest

from cvzoo.core import backend, config
from cvzoo.models import list_models, zoo
from cvzoo.models.detection import box_coding
from cvzoo.models.instance_segmentation import mask_paste
from cvzoo.models.instance_segmentation.mask_rcnn import mask_rcnn_fpn_resnet
from cvzoo.testing import assert_is_instance_segmentation_model

SMALL = {'min_size': 64, 'max_size': 96}
_LOC_KEYS = ('rpn/loc/W', 'rpn/loc/b', 'head/loc/W', 'head/loc/b')


def _image(H, W, seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3, H, W)).astype(numpy.float32)


def _confident(model):
    """Class logits that favour class 1 everywhere, so that random weights detect, boxes
    that are the RoIs (random offsets of features of about 1e3 collapse them), and
    mask logits of a few units (random ResNet features are about 1e3), so that the masks
    are neither all in nor all out."""
    model.mask_head.seg.W.array[...] *= 5e-4
    model.head.conf.W.array[...] = 0
    model.head.conf.b.array[...] = 0
    model.head.conf.b.array[2] = 8.0
    model.head.loc.W.array[...] = 0
    model.head.loc.b.array[...] = 0
    return model


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)
    return _confident(mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50(n_fg_class=3, **SMALL))


@pytest.mark.parametrize('preset', ['visualize', 'evaluate'])
def test_predict_contract(model, preset):
    model.use_preset(preset)
    imgs = [_image(50, 70), _image(80, 40, 1)]
    assert_is_instance_segmentation_model(model, imgs, 3)
    masks, labels, scores = model.predict(imgs)
    assert all(len(label) > 0 and (label == 1).all() for label in labels)
    assert all(mask.shape[1:] == img.shape[1:] for mask, img in zip(masks, imgs))
    assert any(0 < mask.mean() < 1 for mask in masks)


def test_masks_are_the_detections_class_channel_pasted(model):
    model.use_preset('evaluate')
    imgs = [_image(50, 70, 2), _image(60, 60, 3)]
    sizes = [img.shape[1:] for img in imgs]
    prepared = [model.prepare(img) for img in imgs]
    x = model.pad_batch(prepared)
    with config.using_config('train', False), config.no_backprop_mode():
        probs, bboxes, labels, scores = model.segment(x, sizes, prepared)
        hs = model.extractor(x)
        scales = model.input_scales(sizes, prepared)
        for i in range(2):
            segm = model.mask_head(hs, bboxes[i] * numpy.float32(scales[i]),
                                   numpy.full(len(bboxes[i]), i, numpy.int32)).array
            expected = 1 / (1 + numpy.exp(-segm[numpy.arange(len(labels[i])), labels[i] + 1]))
            numpy.testing.assert_allclose(probs[i], expected, rtol=1e-4, atol=1e-6)
    masks, predicted_labels, predicted_scores = model.predict(imgs)
    for i in range(2):
        numpy.testing.assert_array_equal(masks[i], mask_paste.paste_masks(probs[i], bboxes[i],
                                                                          sizes[i]))
        numpy.testing.assert_array_equal(predicted_labels[i], labels[i])
        numpy.testing.assert_allclose(predicted_scores[i], scores[i])


def test_no_detection_gives_empty_masks(model):
    # random weights may score a box 1.0, which FPN keeps at a threshold of 1: one above 1,
    # written past the [0, 1] check, keeps none
    object.__setattr__(model, 'score_thresh', 1.01)
    masks, labels, scores = model.predict([_image(40, 60), _image(64, 64)])
    assert [mask.shape for mask in masks] == [(0, 40, 60), (0, 64, 64)]
    assert labels[0].dtype == numpy.int32 and scores[1].dtype == numpy.float32
    model.use_preset('visualize')


def _chainercv_file(model, path):
    """The model's arrays under ChainerCV's names (y-first offsets, ``bbox_head``)."""
    arrays = model.state_arrays()
    for key in _LOC_KEYS:
        arrays[key] = box_coding.swap_xy_channels(arrays[key])
    arrays = {('bbox_' + key if key.startswith('head/') else key): value
              for key, value in arrays.items()}
    numpy.savez(path, **arrays)
    return arrays


@pytest.fixture(scope='module')
def coco_sized():
    """A model with the 'coco' entry's 80 classes and seeded random weights."""
    numpy.random.seed(4)
    return mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50(n_fg_class=80, **SMALL)


def test_load_chainercv_file_through_the_zoo_key(coco_sized, http_server, monkeypatch,
                                                 tmp_path):
    entry = mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50.weights['coco']
    _chainercv_file(coco_sized, http_server.root / entry.main_file.file_name)
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', http_server.url)
    numpy.random.seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the first load of an unpublished hash warns
        loaded = mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50(pretrained_model='coco', **SMALL)
    assert http_server.count(entry.main_file.file_name) == 1
    assert loaded.n_fg_class == 80 and len(loaded.label_names) == 80
    own, got = coco_sized.state_arrays(), loaded.state_arrays()
    assert sorted(own) == sorted(got)
    for key in own:
        numpy.testing.assert_array_equal(got[key], own[key], err_msg=key)
    img = _image(48, 64, 6)
    _confident(coco_sized)
    _confident(loaded)
    for one, other in zip(coco_sized.predict([img]), loaded.predict([img])):
        numpy.testing.assert_array_equal(one[0], other[0])


def test_other_n_fg_class_re_makes_the_heads(coco_sized, tmp_path):
    path = tmp_path / 'mask_rcnn_chainercv.npz'
    _chainercv_file(coco_sized, path)
    numpy.random.seed(7)
    other = mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50(
        n_fg_class=4, pretrained_model=str(path), source='chainercv', **SMALL)
    assert other.n_fg_class == 4 and other.label_names is None
    assert other.head.conf.W.shape == (5, 1024) and other.head.loc.W.shape == (20, 1024)
    assert other.mask_head.seg.W.shape == (5, 256, 1, 1)
    own, loaded = coco_sized.state_arrays(), other.state_arrays()
    for key in ('extractor/base/res3/a/conv1/conv/W', 'rpn/loc/W', 'head/fc2/W',
                'mask_head/conv1/conv/W', 'mask_head/conv5/W'):
        numpy.testing.assert_array_equal(loaded[key], own[key], err_msg=key)
    masks, labels, _ = _confident(other).predict([_image(40, 50)])
    assert masks[0].shape[1:] == (40, 50) and (labels[0] < 4).all()


def test_imagenet_key_fills_only_the_backbone(coco_sized):
    own = coco_sized.state_arrays()
    raw = {key.removeprefix('extractor/base/'): value for key, value in own.items()
           if key.startswith('extractor/base/')}
    raw['fc6/W'] = numpy.zeros((1000, 2048), numpy.float32)
    raw['fc6/b'] = numpy.zeros(1000, numpy.float32)
    converted = coco_sized.convert_weights(raw, 'chainercv')
    assert sorted(converted) == sorted(own)
    assert any(key.startswith('mask_head/') for key in converted)


def test_weights_entries():
    for cls, mask_ap, box_ap in ((mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50, 0.342, '38.0'),
                                 (mask_rcnn_fpn_resnet.MaskRCNNFPNResNet101, 0.360, '40.4')):
        for key, entry in cls.weights.items():
            assert zoo.schema_problems(entry) == [], (cls, key)
        coco = cls.weights['coco']
        assert coco.reported.metric == 'mask_map_coco'
        assert coco.reported.value == pytest.approx(mask_ap) and box_ap in coco.notes
        assert coco.sha256 == zoo.UNPUBLISHED and coco.n_class == 80
        assert coco.url.endswith('_coco_trained_2019_03_15.npz')
        assert coco.preset.mean == pytest.approx((123.15, 115.90, 103.06), abs=0.01)
        assert 'imagenet' in cls.weights
    assert {'mask_rcnn_fpn_resnet50', 'mask_rcnn_fpn_resnet101'} <= set(
        list_models('instance_segmentation'))


def test_predict_on_the_device(device):
    numpy.random.seed(0)
    model = _confident(mask_rcnn_fpn_resnet.MaskRCNNFPNResNet50(n_fg_class=2, **SMALL))
    imgs = [_image(50, 70), _image(45, 45, 1)]
    expected = model.predict(imgs)
    model.to_device(device)
    masks, labels, scores = model.predict(imgs)
    assert all(isinstance(mask, numpy.ndarray) for mask in masks)
    for i in range(2):
        assert (masks[i] == expected[0][i]).mean() > 0.999
        numpy.testing.assert_array_equal(labels[i], expected[1][i])
        numpy.testing.assert_allclose(scores[i], expected[2][i], rtol=1e-4)
    assert all(param.device == backend.get_device(device) for param in model.params())
