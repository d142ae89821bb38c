"""FasterRCNNResNet50FPNV2 against torchvision's own ``fasterrcnn_resnet50_fpn_v2``.

torchvision's model is built with a fixed seed (weights=None, weights_backbone=None, 91
classes; every BN is BatchNorm2d with eps 1e-5, in eval mode) and made non-degenerate:
the BN of the ResNet and the FPN get the statistics of the test images, those of the box
head the statistics of the RoIs it pools, all then perturbed at random with random gamma
and beta (tests/helpers/torchvision_weights.py); then, as the v1 test does
(test_torchvision_fpn_reference.py), the ResNet's variances are floored, its residual
branches' last BN scaled by 0.1, and the RPN's logits, the offsets and the class scores
scaled up. The state dict is saved with torch.save and loaded into cvzoo through the
zoo key 'coco' (the download answered by the file). Both detect on two images of
different sizes; compared: the RPN's proposals, and the boxes, labels and scores of the
detections (torchvision's of its ten 'N/A' classes left out, as cvzoo never returns
them). torchvision's RoIAlign is the plain-torch one of tests/helpers/torch_roi_align.py,
as in the v1 test.
"""

import numpy
import pytest

from cvzoo.models.detection.faster_rcnn import torchvision_fpn_v2
from tests.helpers import torchvision_weights

torch = pytest.importorskip('torch')
# the v1 test's RoIAlign fixture and its comparison (they need torch)
from tests.models.detection.faster_rcnn import test_torchvision_fpn_reference as v1  # noqa: E402

pytestmark = pytest.mark.reference
SIZES = v1.SIZES
stand_in_roi_align = v1.stand_in_roi_align


def torchvision_v2_model(torchvision, builder, imgs, **kwargs):
    """torchvision's v2 model of ``builder`` with random weights and BN statistics (see
    the module docstring), in eval mode; returns ``(model, transformed images, its
    FPN maps and proposals)`` after the changes."""
    torch.manual_seed(0)
    model = builder(weights=None, weights_backbone=None, num_classes=91, **kwargs)
    model.eval()
    with torch.no_grad():
        images, _ = model.transform([torch.from_numpy(img / 255) for img in imgs])
    torchvision_weights.randomize_batch_norm(torch, model.backbone, images.tensors, seed=0)
    v1.scale_for_comparison(model)
    with torch.no_grad():
        features = model.backbone(images.tensors)
        proposals, _ = model.rpn(images, features)
        pooled = model.roi_heads.box_roi_pool(features, proposals, images.image_sizes)
    torchvision_weights.randomize_batch_norm(torch, model.roi_heads.box_head, pooled, seed=1)
    model.eval()
    model.roi_heads.detections_per_img = 100_000
    return model, images, features, proposals


@pytest.mark.parametrize('min_size, max_size, n_proposal', v1.CASES)
def test_same_proposals_and_detections(torchvision, stand_in_roi_align, tmp_path, rng,
                                       monkeypatch, min_size, max_size, n_proposal):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in SIZES]
    reference, _, _, _ = torchvision_v2_model(
        torchvision, torchvision.models.detection.fasterrcnn_resnet50_fpn_v2, imgs,
        min_size=min_size, max_size=max_size, rpn_post_nms_top_n_test=n_proposal)
    assert isinstance(reference.backbone.fpn.inner_blocks[0][1], torch.nn.BatchNorm2d)
    proposals, detections = v1._torchvision_outputs(reference, imgs)
    model = torchvision_weights.save_and_load(
        torch, reference, tmp_path / 'fasterrcnn_v2.pth',
        torchvision_fpn_v2.FasterRCNNResNet50FPNV2, 'coco', min_size=min_size,
        max_size=max_size)
    assert model.extractor.base.res2.a.conv1.bn.eps == 1e-5
    v1.assert_same_as_torchvision(model, imgs, proposals, detections, n_proposal, monkeypatch)


def test_every_torchvision_key_converts(torchvision):
    """Each key of torchvision's v2 state dict maps to one cvzoo key (BN counters
    dropped), the model's keys all filled."""
    torch.manual_seed(1)
    reference = torchvision.models.detection.fasterrcnn_resnet50_fpn_v2(
        weights=None, weights_backbone=None, num_classes=91)
    state = {key: value.numpy() for key, value in reference.state_dict().items()}
    model = torchvision_fpn_v2.FasterRCNNResNet50FPNV2(n_fg_class=80)
    model.head.reset_classes(91)
    model.n_unused_class = 10
    arrays = model.convert_weights(state, 'torchvision')
    numpy.testing.assert_array_equal(arrays['head/conv3/bn/avg_var'],
                                     state['roi_heads.box_head.2.1.running_var'])
    numpy.testing.assert_array_equal(arrays['head/fc1/W'], state['roi_heads.box_head.5.weight'])
    numpy.testing.assert_array_equal(arrays['rpn/conv/1/W'], state['rpn.head.conv.1.0.weight'])
    numpy.testing.assert_array_equal(arrays['extractor/outer/2/bn/gamma'],
                                     state['backbone.fpn.layer_blocks.2.1.weight'])
    assert int(arrays['n_unused_class']) == 10
    # torchvision's parameter count (its docs: num_params 43,712,278)
    n_param = sum(p.numel() for p in reference.parameters())
    assert n_param == 43_712_278
    assert sum(p.size for p in model.params()) == n_param
