"""KeypointRCNNResNet50FPN against torchvision's own ``keypointrcnn_resnet50_fpn``.

torchvision's model is built with a fixed seed (weights=None, weights_backbone=None, two
classes and 17 keypoints, BatchNorm2d with eps 1e-5 in eval mode) and made
non-degenerate as the Faster and Mask R-CNN reference tests make theirs (BN statistics of
the test images, then ``scale_for_comparison``: floored variances, damped residual
branches, scaled logits and offsets), its heatmap logits scaled to a few units; it is
saved with torch.save and cvzoo loads the file (source 'torchvision', bn_eps 1e-5). Both
detect on two images of different sizes; the detections pair one to one: same label,
score within 1e-4, box within 1e-2 pixels, every keypoint's score within 1e-3, and its
point within 1e-2 pixels where torchvision's resized heatmap has one clear maximum (its
best value at least 1e-3 above the second best; cvzoo's heatmaps are torchvision's
within about 1e-4). Random weights give some RoIs constant features (boxes thinner than
a pixel at the image border), whose resized maps tie exactly in torch and within float32
ulps in cvzoo; those points (a few percent, at most 5 % allowed) are left out.
torchvision's RoIAlign is the plain-torch one of tests/helpers/torch_roi_align.py (its
compiled op cannot load beside CPU torch).
"""

import sys

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.keypoint_detection import keypoint_rcnn

torch = pytest.importorskip('torch')
from tests.helpers import torch_roi_align  # noqa: E402 - needs torch
from tests.models.detection.faster_rcnn.test_torchvision_fpn_reference import (  # noqa: E402
    calibrate_batch_norms,
    scale_for_comparison,
)
pytestmark = pytest.mark.reference

SIZES = ((100, 150), (90, 70))
MIN_SIZE, MAX_SIZE, N_PROPOSAL = 64, 96, 100


@pytest.fixture
def stand_in_roi_align(torchvision, monkeypatch):
    """torchvision's MultiScaleRoIAlign (box and keypoint heads) calls the plain-torch
    one."""
    monkeypatch.setattr(sys.modules['torchvision.ops.poolers'], 'roi_align',
                        torch_roi_align.roi_align)


def _torchvision_model(torchvision, imgs):
    torch.manual_seed(0)
    model = torchvision.models.detection.keypointrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, min_size=MIN_SIZE, max_size=MAX_SIZE,
        rpn_post_nms_top_n_test=N_PROPOSAL)
    calibrate_batch_norms(model, imgs)
    scale_for_comparison(model)
    logits = []
    hook = model.roi_heads.keypoint_predictor.register_forward_hook(
        lambda module, inputs, output: logits.append(output))
    with torch.no_grad():
        model([torch.from_numpy(img / 255) for img in imgs])
        hook.remove()
        # heatmap logits of a few units, with a bias per keypoint
        deconv = model.roi_heads.keypoint_predictor.kps_score_lowres
        deconv.weight *= 3 / float(logits[0].std())
        deconv.bias.uniform_(-1, 1)
    return model


def _pair(i, expected, got):
    """Index of cvzoo's detection that is torchvision's ``expected`` one (asserts one)."""
    bbox, point, point_score, label, score, used = got
    fits = ~used & (label == expected['label'])
    fits &= numpy.abs(score - expected['score']) <= 1e-4
    fits &= (numpy.abs(bbox - expected['bbox']) <= 1e-2).all(axis=1)
    assert fits.any(), f"image {i}: torchvision's detection {expected} has no cvzoo twin"
    return int(numpy.nonzero(fits)[0][0])


def _clear_maxima(heatmaps, boxes):
    """Per image, (R, K) bool: torchvision's resized heatmap of the point has its maximum
    at least 1e-3 above the rest (torch's own bicubic resize, box by box)."""
    clear = []
    for heatmap, box in zip(heatmaps, boxes):
        size = torch.ceil((box[:, 2:] - box[:, :2]).clamp(min=1)).int()
        gaps = []
        for r in range(len(box)):  # the reference: one RoI at a time, as torchvision
            width, height = (int(v) for v in size[r])
            resized = torch.nn.functional.interpolate(
                heatmap[r:r + 1], size=(height, width), mode='bicubic', align_corners=False)
            top = resized[0].flatten(1).topk(2, dim=1).values
            gaps.append((top[:, 0] - top[:, 1]).numpy())
        clear.append(numpy.array(gaps).reshape(len(box), -1) >= 1e-3)
    return clear


@pytest.mark.slow  # two Keypoint R-CNNs of 59 million parameters, 100 RoIs each
def test_same_instances_as_torchvision(torchvision, stand_in_roi_align, tmp_path, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in SIZES]
    reference = _torchvision_model(torchvision, imgs)
    path = tmp_path / 'keypointrcnn.pth'
    torch.save(reference.state_dict(), path)
    heatmaps, boxes = [], []
    reference.roi_heads.keypoint_roi_pool.register_forward_hook(
        lambda module, inputs, output: boxes.extend(inputs[1]))
    reference.roi_heads.keypoint_predictor.register_forward_hook(
        lambda module, inputs, output: heatmaps.extend(output.split([len(b) for b in boxes])))
    with torch.no_grad():
        detections = reference([torch.from_numpy(img / 255) for img in imgs])
    clear = _clear_maxima(heatmaps, boxes)

    model = keypoint_rcnn.KeypointRCNNResNet50FPN(
        pretrained_model=str(path), source='torchvision', min_size=MIN_SIZE,
        max_size=MAX_SIZE, bn_eps=1e-5)
    model.rpn.n_test_post_nms = N_PROPOSAL
    assert (model.n_fg_class, model.n_point) == (1, 17)
    model.use_preset('evaluate')
    bboxes, points, point_scores, labels, scores = model.predict_with_bboxes(imgs)
    for i, detection in enumerate(detections):
        assert len(scores[i]) == len(detection['scores']) > 0
        used = numpy.zeros(len(scores[i]), bool)
        for k in range(len(detection['scores'])):
            expected = {'label': int(detection['labels'][k]) - 1,
                        'score': float(detection['scores'][k]),
                        'bbox': detection['boxes'][k].numpy()}
            j = _pair(i, expected, (bboxes[i], points[i], point_scores[i], labels[i],
                                    scores[i], used))
            used[j] = True
            numpy.testing.assert_allclose(
                points[i][j][clear[i][k]], detection['keypoints'][k, clear[i][k], :2].numpy(),
                atol=1e-2, err_msg=f'image {i}, detection {k}')
            numpy.testing.assert_allclose(point_scores[i][j],
                                          detection['keypoints_scores'][k].numpy(),
                                          atol=1e-3, rtol=1e-4,
                                          err_msg=f'image {i}, detection {k}')
    share = numpy.concatenate([c.ravel() for c in clear]).mean()
    assert share >= 0.95, f'only {share:.1%} of the points have a clear maximum'
    spread = numpy.concatenate([point.reshape(-1, 2) for point in points]).std(axis=0)
    assert (spread > 3).all(), 'the points gather in one place: the heatmaps are flat'


def test_torchvision_names_convert(torchvision):
    torch.manual_seed(1)
    reference = torchvision.models.detection.keypointrcnn_resnet50_fpn(
        weights=None, weights_backbone=None)
    state = {key: value.numpy() for key, value in reference.state_dict().items()}
    model = keypoint_rcnn.KeypointRCNNResNet50FPN(min_size=64, max_size=96)
    arrays = model.convert_weights(state, 'torchvision')
    assert int(arrays['n_unused_class']) == 0
    for i in range(8):
        numpy.testing.assert_array_equal(arrays[f'keypoint_head/conv{i + 1}/conv/W'],
                                         state[f'roi_heads.keypoint_head.{2 * i}.weight'])
    numpy.testing.assert_array_equal(
        arrays['keypoint_head/deconv/W'],
        state['roi_heads.keypoint_predictor.kps_score_lowres.weight'])
    assert arrays['head/conf/W'].shape == (2, 1024)
    extra = {**state, 'roi_heads.keypoint_head.16.weight': state[
        'roi_heads.keypoint_head.14.weight']}
    with pytest.raises(errors.WeightLoadError, match=r'roi_heads\.keypoint_head\.16\.weight'):
        model.convert_weights(extra, 'torchvision')
    lacking = {key: value for key, value in state.items() if 'keypoint_head.6.' not in key}
    with pytest.raises(errors.WeightLoadError, match='keypoint_head/conv4/conv/W'):
        model.convert_weights(lacking, 'torchvision')
