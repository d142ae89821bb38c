"""RetinaNet ResNet-50 FPN against torchvision's own ``retinanet_resnet50_fpn`` (v1).

torchvision's model is built as its published COCO_V1 weights are (91 outputs, ResNet BN
frozen with eps 0), given random weights, saved with torch.save and loaded into cvzoo
through the 'coco' key (the path a downloaded file takes). Both detect on two small
images of different sizes (min_size/max_size shrunk to keep it fast): the same
detections, in the same order, with boxes in the input image, labels mapped from
torchvision's 91 COCO ids to cvzoo's 80 by name.

NMS: cvzoo drops a box at IoU >= nms_thresh, torchvision at IoU > nms_thresh; with random
real-valued boxes an IoU of exactly 0.5 does not occur, so the rules agree here.
"""

import numpy
import pytest

from cvzoo.models.detection import torchvision_transform
from cvzoo.models.detection.retinanet import retinanet
from tests.helpers import torchvision_weights

pytestmark = pytest.mark.reference
MIN_SIZE, MAX_SIZE = 96, 160
SIZES = ((75, 100), (61, 47))  # (H, W) of the test images


def _frozen_batch_norm(torch, torchvision, module):
    """Replace every BatchNorm2d under ``module`` by a FrozenBatchNorm2d with eps 0 and
    the same parameters, as torchvision's builder and its COCO_V1 loading do."""
    for name, child in module.named_children():
        if isinstance(child, torch.nn.BatchNorm2d):
            frozen = torchvision.ops.misc.FrozenBatchNorm2d(child.num_features, eps=0.0)
            for key in ('weight', 'bias', 'running_mean', 'running_var'):
                getattr(frozen, key).copy_(getattr(child, key))
            setattr(module, name, frozen)
        else:
            _frozen_batch_norm(torch, torchvision, child)


def _randomize_head(torch, net, categories, probe, generator):
    """GroupNorm affine parameters at random; class logits spread to a standard deviation
    of 1.5 around -4 on ``probe`` (a list of images), so that many (anchor, class) pairs
    pass 0.05 and some 0.5 without saturating at 1; the 'N/A' outputs kept at -30, as
    training them only as negatives leaves them (cvzoo drops those 11 rows)."""
    head = net.head
    for module in head.modules():
        if isinstance(module, torch.nn.GroupNorm):
            module.weight.copy_(torch.rand(module.num_channels, generator=generator) * 0.5 + 0.75)
            module.bias.copy_(torch.rand(module.num_channels, generator=generator) * 0.2 - 0.1)
    cls_logits = head.classification_head.cls_logits
    outputs = []
    hook = cls_logits.register_forward_hook(lambda module, args, output: outputs.append(output))
    net.eval()
    net(probe)
    hook.remove()
    torchvision_weights.spread_logits(torch, cls_logits, torch.cat([o.flatten() for o in outputs]),
                                      std=1.5)
    bias = cls_logits.bias.view(-1, len(categories))
    bias.fill_(-4.0)
    bias[:, [i for i, name in enumerate(categories) if name in ('N/A', '__background__')]] = -30.0


def test_resized_size_is_torchvisions(torchvision):
    """The resize rule gives GeneralizedRCNNTransform's image_sizes (eager mode) on a grid
    of sizes (float32 arithmetic is one pixel short on about 1 in 10)."""
    import torch

    transform = torchvision.models.detection.transform.GeneralizedRCNNTransform(
        800, 1333, [0.0] * 3, [1.0] * 3).eval()
    sizes = [(h, w) for h in range(40, 700, 97) for w in range(40, 1400, 173)]
    sizes += [(375, 500), (500, 375), (61, 47), (427, 640)]
    for size in sizes:
        image_list, _ = transform([torch.zeros((1,) + size)])
        resized = torchvision_transform.resized_size(size, 800, 1333)
        assert resized == tuple(image_list.image_sizes[0]), size


@pytest.fixture(scope='module')
def pair(torchvision, tmp_path_factory):
    import torch

    torch.manual_seed(0)
    categories = torchvision.models.detection.RetinaNet_ResNet50_FPN_Weights.COCO_V1.meta[
        'categories']
    net = torchvision.models.detection.retinanet_resnet50_fpn(
        weights=None, weights_backbone=None, num_classes=len(categories), min_size=MIN_SIZE,
        max_size=MAX_SIZE)
    generator = torch.Generator().manual_seed(0)
    # images in [0, 1] of the sizes the test detects on
    probe = [torch.rand(3, *SIZES[0], generator=generator),
             torch.rand(3, *SIZES[1], generator=generator)]
    batch = net.transform(probe)[0].tensors
    torchvision_weights.randomize_batch_norm(torch, net.backbone.body, batch)
    with torch.no_grad():
        _frozen_batch_norm(torch, torchvision, net.backbone.body)
        _randomize_head(torch, net, categories, probe, generator)
    net.eval()
    path = tmp_path_factory.mktemp('retinanet') / 'retinanet_resnet50_fpn_coco.pth'
    model = torchvision_weights.save_and_load(torch, net, path, retinanet.RetinaNetResNet50FPN,
                                              'coco', min_size=MIN_SIZE, max_size=MAX_SIZE)
    return net, model, categories


def test_file_is_the_published_layout(pair):
    """No BN counters in the file (FrozenBatchNorm2d), 91 outputs per anchor."""
    net, _model, categories = pair
    state = net.state_dict()
    assert not any(key.endswith('num_batches_tracked') for key in state)
    assert state['head.classification_head.cls_logits.weight'].shape[0] == 9 * 91
    assert len(categories) == 91


@pytest.mark.parametrize('preset', ['visualize', 'evaluate'])
def test_same_detections_in_the_same_order(pair, preset, rng):
    import torch

    net, model, categories = pair
    model.use_preset(preset)
    net.score_thresh, net.nms_thresh = model.score_thresh, model.nms_thresh
    assert (net.detections_per_img, net.topk_candidates) == (model.max_detections,
                                                              model.n_candidate)
    imgs = [rng.uniform(0, 255, (3, *size)).astype(numpy.float32) for size in SIZES]
    with torch.no_grad():
        expected = net([torch.from_numpy(img / numpy.float32(255)) for img in imgs])
    bboxes, labels, scores = model.predict(imgs, batchsize=2)
    for img, bbox, label, score, reference in zip(imgs, bboxes, labels, scores, expected):
        ref_score = reference['scores'].numpy()
        assert len(ref_score) > 10, 'the reference should detect something'
        ref_label = numpy.array([model.label_names.index(categories[int(i)])
                                 for i in reference['labels']])
        _assert_same_detections((bbox, label, score),
                                (reference['boxes'].numpy(), ref_label, ref_score))
        assert (bbox[:, 2:] <= numpy.array(img.shape[:0:-1]) + 1e-3).all()


def _assert_same_detections(actual, expected, score_tol=1e-4, box_tol=1e-3):
    """The same detections in the same order, up to float32 noise.

    Scores agree position by position to ``score_tol`` (both lists are sorted). Each
    detection must equal (label, box to ``box_tol`` pixels) a distinct reference detection
    whose score is within ``score_tol`` of its own: the one at the same position, or a
    neighbour with a nearly equal score (the two networks' float32 rounding, ~1e-5 in the
    logits, may swap those). A detection without a partner is allowed only at the cut
    (the 300th, or at score_thresh), where a near-tie decides who gets in.
    """
    bbox, label, score = actual
    ref_bbox, ref_label, ref_score = expected
    assert len(score) == len(ref_score)
    numpy.testing.assert_allclose(score, ref_score, rtol=0, atol=score_tol)
    used = numpy.zeros(len(ref_score), bool)
    swapped, unmatched = 0, []
    for i in range(len(score)):
        partner = numpy.flatnonzero(
            ~used & (numpy.abs(ref_score - score[i]) <= score_tol) & (ref_label == label[i])
            & (numpy.abs(ref_bbox - bbox[i]).max(axis=1) <= box_tol))
        if len(partner) == 0:
            unmatched.append(i)
            continue
        j = i if i in partner else partner[0]
        used[j] = True
        swapped += j != i
    assert all(score[i] - score[-1] <= score_tol for i in unmatched), unmatched
    assert len(unmatched) <= 1 and swapped <= 0.05 * len(score), (unmatched, swapped)
