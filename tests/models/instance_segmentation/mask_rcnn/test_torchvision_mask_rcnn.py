"""MaskRCNNResNet50FPN: predict() contract, torchvision's paste, re-made heads, weights
entry, devices."""

import numpy
import pytest

from cvzoo.core import backend, config
from cvzoo.models import list_models, zoo
from cvzoo.models.instance_segmentation import mask_paste
from cvzoo.models.instance_segmentation.mask_rcnn import torchvision_mask_rcnn
from cvzoo.testing import assert_is_instance_segmentation_model

# few instances: random weights detect up to the cap, and each one pools its mask
SMALL = {'min_size': 64, 'max_size': 96, 'max_detections': 6}


def _image(H, W, seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3, H, W)).astype(numpy.float32)


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)
    return torchvision_mask_rcnn.MaskRCNNResNet50FPN(n_fg_class=3, **SMALL)


@pytest.mark.parametrize('preset', ['visualize', 'evaluate'])
def test_predict_contract(model, preset):
    model.use_preset(preset)
    model.score_thresh = min(model.score_thresh, 0.3)  # random weights score about 1 / 4
    imgs = [_image(50, 70), _image(80, 40, 1)]
    assert_is_instance_segmentation_model(model, imgs, 3)
    masks, labels, _ = model.predict(imgs)
    assert all(0 < len(label) <= model.max_detections for label in labels)
    assert any(0 < mask.mean() < 1 for mask in masks)


def test_masks_are_pasted_as_torchvision_at_the_image_boxes(model):
    model.use_preset('evaluate')
    imgs = [_image(50, 70, 2), _image(60, 90, 3)]
    sizes = [img.shape[1:] for img in imgs]
    prepared = [model.prepare(img) for img in imgs]
    with config.using_config('train', False), config.no_backprop_mode():
        probs, bboxes, labels, scores = model.segment(model.pad_batch(prepared), sizes,
                                                      prepared)
    masks, predicted_labels, _ = model.predict(imgs)
    for i, size in enumerate(sizes):
        assert (bboxes[i] <= numpy.array(size)[[1, 0, 1, 0]] + 1e-3).all()  # image pixels
        numpy.testing.assert_array_equal(
            masks[i], mask_paste.paste_masks_torchvision(probs[i], bboxes[i], size))
        numpy.testing.assert_array_equal(predicted_labels[i], labels[i])


def test_other_n_fg_class_re_makes_the_heads(model):
    numpy.random.seed(1)
    other = torchvision_mask_rcnn.MaskRCNNResNet50FPN(n_fg_class=3, **SMALL)
    other.reset_head(5)
    assert other.n_fg_class == 5 and other.n_unused_class == 0
    assert other.mask_head.seg.W.shape == (6, 256, 1, 1)
    assert other.head.conf.W.shape == (6, 1024)


def test_max_detections_is_checked():
    with pytest.raises(ValueError, match='max_detections'):
        torchvision_mask_rcnn.MaskRCNNResNet50FPN(n_fg_class=2, max_detections=0)


def test_weights_entry():
    entry = torchvision_mask_rcnn.MaskRCNNResNet50FPN.weights['coco']
    assert zoo.schema_problems(entry) == []
    assert entry.url.endswith('/maskrcnn_resnet50_fpn_coco-bf2d0c1e.pth')
    assert entry.sha256 == 'bf2d0c1e' and entry.n_class == 80
    assert entry.reported.metric == 'mask_map_coco'
    assert entry.reported.value == pytest.approx(0.346) and '37.9' in entry.notes
    assert 'maskrcnn_resnet50_fpn' in list_models('instance_segmentation')


def test_predict_on_the_device(device):
    numpy.random.seed(0)
    model = torchvision_mask_rcnn.MaskRCNNResNet50FPN(n_fg_class=2, **SMALL)
    model.score_thresh = 0.3
    imgs = [_image(50, 70)]
    expected = model.predict(imgs)
    model.to_device(device)
    masks, labels, scores = model.predict(imgs)
    assert isinstance(masks[0], numpy.ndarray) and len(labels[0]) > 0
    assert (masks[0] == expected[0][0]).mean() > 0.999
    numpy.testing.assert_array_equal(labels[0], expected[1][0])
    numpy.testing.assert_allclose(scores[0], expected[2][0], rtol=1e-4)
    assert all(param.device == backend.get_device(device) for param in model.params())
