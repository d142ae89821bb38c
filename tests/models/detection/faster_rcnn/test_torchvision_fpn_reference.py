"""FasterRCNNResNet50FPN against torchvision's own ``fasterrcnn_resnet50_fpn``.

torchvision's model is built with a fixed seed (weights=None, weights_backbone=None, 91
classes, so its BN is BatchNorm2d with eps 1e-5 in eval mode), made non-degenerate, and
saved with torch.save; cvzoo loads the file (source 'torchvision', bn_eps 1e-5) and both
detect on two images of different sizes. Compared: the RPN's proposals and the final
boxes, labels and scores.

Making it non-degenerate: BN statistics are measured on the test images (the variances
floored), the residual branches' last BN scaled by 0.1 (a random ResNet-50 otherwise
amplifies float32 rounding, here 1e-5 of the resize, into visible ranking changes), the
RPN's logits and both offset layers scaled up so proposals and boxes move, and the class
scores scaled so that detections pass 0.05. The ten 'N/A' classes keep ordinary random
logits: cvzoo keeps them in the softmax (``n_unused_class``), so its scores are
torchvision's, but never returns them; torchvision's detections of those classes are
left out before the comparison (it keeps them all, so that its best 100 of the others
are cvzoo's 100).

torchvision's RoIAlign: its compiled op cannot load beside CPU torch, and its pure-torch
fallback is torch.compile'd (minutes) or very slow eagerly; the test swaps in a plain-torch
RoIAlign with torchvision's rules (tests/helpers/torch_roi_align.py) and checks it against
that fallback on a small case first.
"""

import sys

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.datasets.coco.coco_label_names import coco_category_id_to_label
from cvzoo.models.detection.faster_rcnn import torchvision_fpn

torch = pytest.importorskip('torch')
from tests.helpers.torch_roi_align import roi_align  # noqa: E402 - needs torch
pytestmark = pytest.mark.reference
SIZES = ((100, 150), (90, 70))


@pytest.fixture
def stand_in_roi_align(torchvision, monkeypatch):
    """torchvision's MultiScaleRoIAlign calls tests.helpers.torch_roi_align.roi_align."""
    monkeypatch.setattr(sys.modules['torchvision.ops.poolers'], 'roi_align', roi_align)


def test_stand_in_roi_align_is_torchvisions(torchvision):
    fallback = sys.modules['torchvision.ops.roi_align']._roi_align
    fallback = getattr(fallback, '__wrapped__', fallback)  # NOTE: skip torch.compile
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 12, 10, generator=generator)
    start = torch.rand(40, 2, generator=generator) * 20
    end = torch.minimum(start + 0.3 + torch.rand(40, 2, generator=generator) * 25,
                        torch.tensor([40.0, 48.0]))
    image = torch.randint(0, 2, (40, 1), generator=generator).float()
    rois = torch.cat((image, start, end), dim=1)  # inside the 40 x 48 input
    expected = fallback(x, rois, 0.25, 7, 7, 2, False)
    torch.testing.assert_close(roi_align(x, rois, 7, 0.25, 2), expected, atol=1e-5, rtol=1e-5)


def _torchvision_model(torchvision, imgs, min_size, max_size, n_proposal):
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, num_classes=91, min_size=min_size,
        max_size=max_size, rpn_post_nms_top_n_test=n_proposal)
    calibrate_batch_norms(model, imgs)
    model.roi_heads.detections_per_img = 100_000
    scale_for_comparison(model)
    return model


def calibrate_batch_norms(model, imgs):
    """Set the running statistics of a torchvision R-CNN's ResNet batch norms to those of
    ``imgs`` (one forward pass of its backbone in training mode), then eval mode."""
    batch_norms = [m for m in model.backbone.body.modules()
                   if isinstance(m, torch.nn.BatchNorm2d)]
    for bn in batch_norms:
        bn.momentum = None  # the cumulative average of one batch: its statistics
    model.train()
    with torch.no_grad():
        images, _ = model.transform([torch.from_numpy(img / 255) for img in imgs])
        model.backbone(images.tensors)
    model.eval()


def scale_for_comparison(model):
    """Make a random torchvision R-CNN's detections worth comparing (see the module
    docstring): the ResNet's BN variances floored, its residual branches' last BN scaled
    by 0.1, the RPN's logits and offsets and the box predictor scaled up."""
    with torch.no_grad():
        for name, module in model.backbone.body.named_modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_var.clamp_(min=float(module.running_var.median()) * 0.1 + 1e-3)
            if name.endswith('bn3'):
                module.weight *= 0.1
        model.rpn.head.cls_logits.weight *= 20
        model.rpn.head.bbox_pred.weight *= 10
        predictor = model.roi_heads.box_predictor
        predictor.bbox_pred.weight *= 5
        predictor.cls_score.weight *= 10


def _torchvision_outputs(model, imgs):
    """Proposals (list of (R_i, 4)) and detections of torchvision's model."""
    with torch.no_grad():
        tensors = [torch.from_numpy(img / 255) for img in imgs]
        images, _ = model.transform(tensors)
        proposals, _ = model.rpn(images, model.backbone(images.tensors))
        detections = model(tensors)
    return [p.numpy() for p in proposals], detections


def _same_up_to_neighbour_swaps(ours, theirs, atol):
    """Equal rows in the same order, but for swaps of neighbours (near-tied scores)."""
    assert ours.shape == theirs.shape
    same = numpy.abs(ours - theirs).max(axis=1) <= atol
    for i in numpy.nonzero(~same)[0]:
        window = theirs[max(i - 2, 0):i + 3]
        assert (numpy.abs(window - ours[i]).max(axis=1) <= atol).any(), f'row {i}'
    assert same.mean() >= 0.98


CASES = [pytest.param(64, 96, 100, id='small'),
         pytest.param(128, 192, 1000, id='full', marks=pytest.mark.slow)]


@pytest.mark.parametrize('min_size, max_size, n_proposal', CASES)
def test_same_proposals_and_detections(torchvision, stand_in_roi_align, tmp_path, rng,
                                       monkeypatch, min_size, max_size, n_proposal):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in SIZES]
    reference = _torchvision_model(torchvision, imgs, min_size, max_size, n_proposal)
    path = tmp_path / 'fasterrcnn.pth'
    torch.save(reference.state_dict(), path)
    proposals, detections = _torchvision_outputs(reference, imgs)

    model = torchvision_fpn.FasterRCNNResNet50FPN(
        pretrained_model=str(path), source='torchvision', min_size=min_size,
        max_size=max_size, bn_eps=1e-5)
    assert_same_as_torchvision(model, imgs, proposals, detections, n_proposal, monkeypatch)


def assert_same_as_torchvision(model, imgs, proposals, detections, n_proposal, monkeypatch):
    """``model`` (torchvision's weights loaded) keeps ``n_proposal`` proposals and
    predicts ``imgs`` with its 'evaluate' preset: its proposals and detections equal
    torchvision's (``proposals``, ``detections`` of the same images) but for swaps of
    near-tied neighbours; torchvision's detections of 'N/A' classes are left out."""
    model.rpn.n_test_post_nms = n_proposal
    assert (model.n_fg_class, model.n_unused_class) == (80, 10)
    model.use_preset('evaluate')
    recorded = []
    propose = model.rpn.propose
    monkeypatch.setattr(model.rpn, 'propose', lambda *args: recorded.append(propose(*args))
                        or recorded[-1])
    bboxes, labels, scores = model.predict(imgs)

    rois, roi_indices = (backend.to_numpy(a) for a in recorded[0])
    for i, expected in enumerate(proposals):
        assert 0 < len(expected) <= n_proposal
        _same_up_to_neighbour_swaps(rois[roi_indices == i], expected, 1e-2)
    for i, detection in enumerate(detections):
        category = detection['labels'].numpy()
        kept = numpy.isin(category, list(coco_category_id_to_label))
        assert (~kept).any(), "no detection of an 'N/A' class: their logits do not matter"
        first = numpy.nonzero(kept)[0][:model.max_detections]
        expected_labels = [coco_category_id_to_label[int(c)] for c in category[first]]
        assert len(bboxes[i]) == len(expected_labels) > 0
        # boxes with their labels; two detections of near-tied scores may swap places
        _same_up_to_neighbour_swaps(
            numpy.concatenate((bboxes[i], labels[i][:, None]), axis=1),
            numpy.concatenate((detection['boxes'].numpy()[first],
                               numpy.asarray(expected_labels)[:, None]), axis=1), 1e-2)
        numpy.testing.assert_allclose(scores[i], detection['scores'].numpy()[first],
                                      atol=1e-4)
