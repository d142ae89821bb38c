"""SSD300VGG16 against torchvision's real ``ssd300_vgg16`` (the ``torchvision`` fixture).

Fast parts: anchors (``DefaultBoxGenerator``), preprocessing
(``GeneralizedRCNNTransform``), post-processing (``postprocess_detections`` and the
transform's ``postprocess``) on the same random head outputs, and the loss
(``compute_loss``). Slow: the whole model, torchvision's random COCO-layout weights
saved with torch.save and loaded by cvzoo, on two images of different sizes.
"""

import numpy
import pytest

from cvzoo.core import config
from cvzoo.core.variable import Variable
from cvzoo.datasets.coco.coco_label_names import coco_category_id_to_label
from cvzoo.models.detection.ssd import multibox_loss, torchvision_names
from cvzoo.models.detection.ssd import ssd_vgg16_torchvision as tv_ssd

pytestmark = pytest.mark.reference
SIZES = [(240, 320), (300, 200)]
K = 8732


@pytest.fixture(scope='module')
def torch(torchvision):
    import torch as module

    return module


@pytest.fixture(scope='module')
def tv_model(torchvision, torch):
    """torchvision's ssd300_vgg16 with 91 classes, in eval mode, its parameters on the
    'meta' device (no values: the fast tests use its rules, not its weights)."""
    with torch.device('meta'):
        return torchvision.models.detection.ssd300_vgg16(
            weights=None, weights_backbone=None, num_classes=91).eval()


@pytest.fixture(scope='module')
def model():
    """cvzoo's model with 90 contiguous classes: torchvision's labels 1 ... 90."""
    return tv_ssd.SSD300VGG16(n_fg_class=90)


def _tv_anchors(torchvision, torch, tv_model, n_image=1):
    image_list = torchvision.models.detection.image_list.ImageList(
        torch.zeros(n_image, 3, 300, 300), [(300, 300)] * n_image)
    features = [torch.zeros(n_image, 1, g, g) for g in (38, 19, 10, 5, 3, 1)]
    return tv_model.anchor_generator(image_list, features)


def _corners(center_size):
    return numpy.concatenate((center_size[:, :2] - center_size[:, 2:] / 2,
                              center_size[:, :2] + center_size[:, 2:] / 2), axis=1)


def test_anchors_are_default_box_generators(torchvision, torch, tv_model, model):
    anchors = _tv_anchors(torchvision, torch, tv_model)[0].numpy()
    numpy.testing.assert_allclose(_corners(model.coder.default_bbox), anchors, atol=1e-4)
    # another setting, with clipping: scales 0.5 and 1.4 on a 3x3 map, ratios 2 and 3
    generator = torchvision.models.detection.anchor_utils.DefaultBoxGenerator(
        [[2, 3]], scales=[0.5, 1.4], steps=[100])
    image_list = torchvision.models.detection.image_list.ImageList(
        torch.zeros(1, 3, 300, 300), [(300, 300)])
    expected = generator(image_list, [torch.zeros(1, 1, 3, 3)])[0].numpy()
    ours = tv_ssd.default_bbox((3,), ((2, 3),), (100,), (0.5, 1.4), 300)
    numpy.testing.assert_allclose(_corners(ours), expected, atol=1e-4)


def test_prepare_is_the_transforms(torch, tv_model, model, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in SIZES]
    with torch.no_grad():
        images, _ = tv_model.transform([torch.from_numpy(img / 255) for img in imgs])
    assert images.image_sizes == [(300, 300)] * 2
    expected = images.tensors.numpy()
    # NOTE: torch computes the source coordinates in float32: its interpolation weights
    # are off by ~1e-5, which moves a pixel of uniform noise by up to ~0.01
    numpy.testing.assert_allclose(numpy.stack([model.prepare(img) for img in imgs]),
                                  expected, atol=2e-2)


def _assert_same_detections(expected, actual, box_atol, score_atol):
    """Same detections in the same order, up to swaps of scores closer than score_atol."""
    (bbox, label, score), (our_bbox, our_label, our_score) = expected, actual
    assert len(our_bbox) == len(bbox)
    numpy.testing.assert_allclose(our_score, score, atol=score_atol)
    match = ((numpy.abs(our_score[None] - score[:, None]) <= score_atol)
             & (our_label[None] == label[:, None])
             & (numpy.abs(our_bbox[None] - bbox[:, None]).max(axis=2) <= box_atol))
    assert match.any(axis=1).all()
    assert len(set(match.argmax(axis=1).tolist())) == len(bbox)


def test_post_processing_is_torchvisions(torchvision, torch, tv_model, model, rng):
    loc = rng.normal(0, 0.5, (2, K, 4)).astype(numpy.float32)
    conf = rng.normal(0, 1.5, (2, K, 91)).astype(numpy.float32)
    conf[:, :, 0] = 10  # NOTE: a sure background, so fewer than 200 detections
    conf[0, :10, 7] = 15 + 0.5 * numpy.arange(10)  # ten overlapping sure boxes of a class
    model.use_preset('evaluate')
    with torch.no_grad():
        head_outputs = {'bbox_regression': torch.from_numpy(loc),
                        'cls_logits': torch.from_numpy(conf)}
        anchors = _tv_anchors(torchvision, torch, tv_model, 2)
        detections = tv_model.postprocess_detections(head_outputs, anchors, [(300, 300)] * 2)
        detections = tv_model.transform.postprocess(detections, [(300, 300)] * 2, SIZES)
        bbox, score = model.decode((Variable(loc), Variable(conf)), SIZES)
    bboxes, labels, scores = model.suppress(bbox, score, SIZES)
    for i, detection in enumerate(detections):
        assert 20 < len(detection['boxes']) < 200
        expected = (detection['boxes'].numpy(), detection['labels'].numpy() - 1,
                    detection['scores'].numpy())
        _assert_same_detections(expected, (bboxes[i], labels[i], scores[i]), 1e-3, 1e-6)


def test_loss_is_torchvisions(torchvision, torch, tv_model, model, rng):
    loc = rng.normal(0, 1, (2, K, 4)).astype(numpy.float32)
    conf = rng.normal(0, 1, (2, K, 91)).astype(numpy.float32)
    bboxes = [numpy.array([[20, 30, 120, 200], [150, 40, 290, 150]], numpy.float32),
              numpy.array([[5, 5, 60, 50]], numpy.float32)]
    labels = [numpy.array([3, 57]), numpy.array([90])]  # torchvision's class indices
    with torch.no_grad():
        anchors = _tv_anchors(torchvision, torch, tv_model, 2)
        targets = [{'boxes': torch.from_numpy(b), 'labels': torch.from_numpy(lab)}
                   for b, lab in zip(bboxes, labels)]
        matched = [tv_model.proposal_matcher(torchvision.ops.box_iou(t['boxes'], a))
                   for t, a in zip(targets, anchors)]
        losses = tv_model.compute_loss(
            targets, {'bbox_regression': torch.from_numpy(loc),
                      'cls_logits': torch.from_numpy(conf)}, anchors, matched)
    encoded = [model.coder.encode(b, (lab - 1).astype(numpy.int32))
               for b, lab in zip(bboxes, labels)]
    for (_, mb_label), match in zip(encoded, matched):
        numpy.testing.assert_array_equal(mb_label > 0, match.numpy() >= 0)
    gt_mb_locs, gt_mb_labels = (numpy.stack(part) for part in zip(*encoded))
    with config.no_backprop_mode():
        loc_loss, conf_loss = multibox_loss.multibox_loss(loc, conf, gt_mb_locs, gt_mb_labels)
    assert float(loc_loss.array) == pytest.approx(float(losses['bbox_regression']), rel=1e-4)
    assert float(conf_loss.array) == pytest.approx(float(losses['classification']), rel=1e-4)


def _randomise_heads(torch, tv_model, probe, logit_std=1.5, background=6.0):
    """Scale the heads so that on ``probe`` the class logits have std ``logit_std`` and
    mean 0 per class (varied classes, none saturating), the background ``background``
    higher, and the offsets std 0.5."""
    with torch.no_grad():
        features = list(tv_model.backbone(probe).values())
        for h, conf, loc in zip(features, tv_model.head.classification_head.module_list,
                                tv_model.head.regression_head.module_list):
            conf.weight.mul_(logit_std / conf(h).std())
            conf.bias.sub_(conf(h).mean(dim=(0, 2, 3)))
            conf.bias.view(-1, 91)[:, 0] += background
            loc.weight.mul_(0.5 / loc(h).std())


@pytest.mark.slow
def test_whole_model_is_torchvisions(torchvision, torch, tmp_path, rng):
    torch.manual_seed(1)
    reference = torchvision.models.detection.ssd300_vgg16(
        weights=None, weights_backbone=None, num_classes=91).eval()
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in SIZES]
    inputs = [torch.from_numpy(img / 255).float() for img in imgs]
    with torch.no_grad():
        images, _ = reference.transform(inputs)
    _randomise_heads(torch, reference, images.tensors)
    reference.detections_per_img = 10000  # all, so that the N/A classes can be left out
    path = tmp_path / 'ssd300_vgg16_random.pth'
    torch.save(reference.state_dict(), path)
    model = tv_ssd.SSD300VGG16(pretrained_model=str(path), source='torchvision')
    assert (model.n_fg_class, model.n_unused_class) == (80, 10)
    model.use_preset('evaluate')
    with torch.no_grad():
        head = reference.head(list(reference.backbone(images.tensors).values()))
        detections = reference(inputs)
    with config.using_config('train', False), config.no_backprop_mode():
        mb_locs, mb_confs = model(numpy.stack([model.prepare(img) for img in imgs]))
    numpy.testing.assert_allclose(mb_locs.array, head['bbox_regression'].numpy(), atol=1e-3)
    order = list(torchvision_names.COCO_COLUMN_ORDER)
    numpy.testing.assert_allclose(mb_confs.array, head['cls_logits'].numpy()[..., order],
                                  atol=2e-3)
    bboxes, labels, scores = model.predict(imgs)
    for i, detection in enumerate(detections):
        category = detection['labels'].numpy()
        kept = numpy.isin(category, list(coco_category_id_to_label))
        assert (~kept).any() and kept.sum() > len(bboxes[i]) == model.max_detections
        first = numpy.nonzero(kept)[0][:model.max_detections]
        expected = (detection['boxes'].numpy()[first],
                    numpy.array([coco_category_id_to_label[c] for c in category[first]]),
                    detection['scores'].numpy()[first])
        _assert_same_detections(expected, (bboxes[i], labels[i], scores[i]), 1e-3, 1e-4)
