"""MaskRCNNResNet50FPN against torchvision's own ``maskrcnn_resnet50_fpn``.

torchvision's model is built with a fixed seed (weights=None, 91 classes, BatchNorm2d
with eps 1e-5 in eval mode) and made non-degenerate as the Faster R-CNN reference test
makes its model (tests/models/detection/faster_rcnn/test_torchvision_fpn_reference.py:
BN statistics of the test images, scaled logits and offsets), its mask logits scaled to
a few units; it is saved with torch.save and cvzoo loads the file (source 'torchvision',
bn_eps 1e-5). Both segment two images of different sizes. torchvision's detections of
its ten 'N/A' classes are left out (cvzoo never returns them), the rest pair one to one
with cvzoo's: same label, score within 1e-4, box within 1e-2 pixels, mask IoU >= 0.99
(torchvision's mask probabilities thresholded at >= 0.5). torchvision's RoIAlign is the
plain-torch one of tests/helpers/torch_roi_align.py (its compiled op cannot load beside
CPU torch).
"""

import sys

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.datasets.coco.coco_label_names import coco_category_id_to_label
from cvzoo.models.instance_segmentation.mask_rcnn import torchvision_mask_rcnn

torch = pytest.importorskip('torch')
from tests.helpers import torch_roi_align  # noqa: E402 - needs torch
from tests.models.detection.faster_rcnn import (  # noqa: E402 - needs torch
    test_torchvision_fpn_reference as box_reference,
)
pytestmark = pytest.mark.reference


SIZES = ((100, 150), (90, 70))
MIN_SIZE, MAX_SIZE, N_PROPOSAL = 64, 96, 100


@pytest.fixture
def stand_in_roi_align(torchvision, monkeypatch):
    """torchvision's MultiScaleRoIAlign (box and mask heads) calls the plain-torch one."""
    monkeypatch.setattr(sys.modules['torchvision.ops.poolers'], 'roi_align',
                        torch_roi_align.roi_align)


def _torchvision_model(torchvision, imgs):
    torch.manual_seed(0)
    model = torchvision.models.detection.maskrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, num_classes=91, min_size=MIN_SIZE,
        max_size=MAX_SIZE, rpn_post_nms_top_n_test=N_PROPOSAL)
    box_reference.calibrate_batch_norms(model, imgs)
    model.roi_heads.detections_per_img = 100_000
    box_reference.scale_for_comparison(model)
    scale_mask_logits(model, imgs)
    return model


def scale_mask_logits(model, imgs):
    """Scale torchvision's mask logits on ``imgs`` to about 3 (masks neither empty nor
    full) and draw their biases from [-1, 1]."""
    logits = []
    hook = model.roi_heads.mask_predictor.register_forward_hook(
        lambda module, inputs, output: logits.append(output))
    with torch.no_grad():
        model([torch.from_numpy(img / 255) for img in imgs])
        hook.remove()
        model.roi_heads.mask_predictor.mask_fcn_logits.weight *= 3 / float(logits[0].std())
        model.roi_heads.mask_predictor.mask_fcn_logits.bias.uniform_(-1, 1)


def _mask_iou(a, b):
    union = numpy.logical_or(a, b).sum()
    return 1.0 if union == 0 else numpy.logical_and(a, b).sum() / union


@pytest.mark.slow  # torchvision pastes the masks of all its (uncapped) detections
def test_same_instances_as_torchvision(torchvision, stand_in_roi_align, tmp_path, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in SIZES]
    reference = _torchvision_model(torchvision, imgs)
    path = tmp_path / 'maskrcnn.pth'
    torch.save(reference.state_dict(), path)
    with torch.no_grad():
        detections = reference([torch.from_numpy(img / 255) for img in imgs])

    model = torchvision_mask_rcnn.MaskRCNNResNet50FPN(
        pretrained_model=str(path), source='torchvision', min_size=MIN_SIZE,
        max_size=MAX_SIZE, bn_eps=1e-5)
    assert_same_instances_as_torchvision(model, imgs, detections)


def assert_same_instances_as_torchvision(model, imgs, detections):
    """``model`` (torchvision's weights loaded; N_PROPOSAL proposals, 'evaluate' preset)
    segments ``imgs`` into torchvision's ``detections`` of them but for its 'N/A'
    classes: one to one, same label, score within 1e-4, box within 1e-2 pixels, mask IoU
    >= 0.99; some masks neither empty nor half the image."""
    model.rpn.n_test_post_nms = N_PROPOSAL
    assert (model.n_fg_class, model.n_unused_class) == (80, 10)
    model.use_preset('evaluate')
    masks, labels, scores = model.predict(imgs)
    prepared = [model.prepare(img) for img in imgs]
    with config.using_config('train', False), config.no_backprop_mode():
        _, bboxes, _, _ = model.segment(model.pad_batch(prepared),
                                        [img.shape[1:] for img in imgs], prepared)
    n_partial = 0
    for i, detection in enumerate(detections):
        category = detection['labels'].numpy()
        kept = numpy.isin(category, list(coco_category_id_to_label))
        assert (~kept).any(), "no detection of an 'N/A' class: their logits do not matter"
        first = numpy.nonzero(kept)[0][:model.max_detections]
        expected_label = numpy.array([coco_category_id_to_label[int(c)]
                                      for c in category[first]])
        expected_score = detection['scores'].numpy()[first]
        expected_bbox = detection['boxes'].numpy()[first]
        expected_mask = detection['masks'].numpy()[first, 0] >= 0.5
        assert len(scores[i]) == len(expected_label) > 0
        used = numpy.zeros(len(scores[i]), bool)
        for k in range(len(expected_label)):
            fits = ~used & (labels[i] == expected_label[k])
            fits &= numpy.abs(scores[i] - expected_score[k]) <= 1e-4
            fits &= (numpy.abs(bboxes[i] - expected_bbox[k]) <= 1e-2).all(axis=1)
            assert fits.any(), f'image {i}: torchvision\'s detection {k} has no cvzoo twin'
            candidates = numpy.nonzero(fits)[0]
            ious = [_mask_iou(masks[i][c], expected_mask[k]) for c in candidates]
            best = int(numpy.argmax(ious))
            assert ious[best] >= 0.99, f'image {i}, detection {k}: mask IoU {ious[best]}'
            used[candidates[best]] = True
        n_partial += sum(0 < mask.mean() < 0.5 for mask in expected_mask)
    assert n_partial > 0, 'every mask is empty or covers half the image or more'


def test_torchvision_names_convert(torchvision):
    torch.manual_seed(1)
    reference = torchvision.models.detection.maskrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, num_classes=91)
    state = {key: value.numpy() for key, value in reference.state_dict().items()}
    model = torchvision_mask_rcnn.MaskRCNNResNet50FPN(n_fg_class=80, min_size=64,
                                                     max_size=96)
    # the names of the published file (torchvision before 0.13: mask_fcn{i})
    old = dict(state)
    for i in range(4):
        old = {key.replace(f'mask_head.{i}.0.', f'mask_head.mask_fcn{i + 1}.'): value
               for key, value in old.items()}
    assert 'roi_heads.mask_head.mask_fcn4.weight' in old
    logits = state['roi_heads.mask_predictor.mask_fcn_logits.bias']
    for raw in (state, old):
        arrays = model.convert_weights(raw, 'torchvision')
        assert int(arrays['n_unused_class']) == 10
        numpy.testing.assert_array_equal(arrays['mask_head/conv3/conv/W'],
                                         state['roi_heads.mask_head.2.0.weight'])
        # cvzoo's class row label + 1 holds COCO category id's row (e.g. stop sign, id 13)
        for category, label in coco_category_id_to_label.items():
            assert arrays['mask_head/seg/b'][label + 1] == logits[category]
        assert arrays['mask_head/seg/b'][0] == logits[0]
    with pytest.raises(errors.WeightLoadError, match='roi_heads.mask_head.extra.weight'):
        model.convert_weights({**state, 'roi_heads.mask_head.extra.weight': state[
            'roi_heads.mask_head.0.0.weight']}, 'torchvision')
