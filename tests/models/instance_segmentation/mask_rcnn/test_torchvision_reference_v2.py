"""MaskRCNNResNet50FPNV2 against torchvision's own ``maskrcnn_resnet50_fpn_v2``.

torchvision's model is built and made non-degenerate as the Faster R-CNN v2 reference
test makes its model (tests/models/detection/faster_rcnn/
test_torchvision_fpn_v2_reference.py: random BN statistics, gamma and beta in the ResNet,
the FPN and the box head, the v1 test's scaled logits and offsets); the mask head's BN
get the statistics of the RoIs it pools, perturbed the same way, and the mask logits are
scaled to a few units as the v1 test scales them (test_torchvision_reference.py). The
state dict is saved with torch.save and loaded through the zoo key 'coco'. Both segment
two images of different sizes; torchvision's detections of its ten 'N/A' classes are
left out, the rest pair one to one with cvzoo's: same label, score within 1e-4, box
within 1e-2 pixels, mask IoU >= 0.99 (torchvision's probabilities at >= 0.5).
"""

import numpy
import pytest

from cvzoo import errors
from cvzoo.datasets.coco.coco_label_names import coco_category_id_to_label
from cvzoo.models.instance_segmentation.mask_rcnn import torchvision_mask_rcnn_v2
from tests.helpers import torchvision_weights

torch = pytest.importorskip('torch')
# the v1 test's RoIAlign fixture and comparison, the box v2 test's randomisation (need torch)
from tests.models.detection.faster_rcnn import (  # noqa: E402
    test_torchvision_fpn_v2_reference as box_v2,
)
from tests.models.instance_segmentation.mask_rcnn import (  # noqa: E402
    test_torchvision_reference as v1,
)

pytestmark = pytest.mark.reference
SIZES = v1.SIZES
MIN_SIZE, MAX_SIZE, N_PROPOSAL = v1.MIN_SIZE, v1.MAX_SIZE, v1.N_PROPOSAL
stand_in_roi_align = v1.stand_in_roi_align


def _torchvision_model(torchvision, imgs):
    model, images, features, proposals = box_v2.torchvision_v2_model(
        torchvision, torchvision.models.detection.maskrcnn_resnet50_fpn_v2, imgs,
        min_size=MIN_SIZE, max_size=MAX_SIZE, rpn_post_nms_top_n_test=N_PROPOSAL)
    heads = model.roi_heads
    with torch.no_grad():
        pooled = heads.mask_roi_pool(features, [p[:50] for p in proposals],
                                     images.image_sizes)
    torchvision_weights.randomize_batch_norm(torch, heads.mask_head, pooled, seed=2)
    model.eval()
    v1.scale_mask_logits(model, imgs)
    return model


@pytest.mark.slow  # torchvision pastes the masks of all its (uncapped) detections
def test_same_instances_as_torchvision(torchvision, stand_in_roi_align, tmp_path, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in SIZES]
    reference = _torchvision_model(torchvision, imgs)
    assert isinstance(reference.roi_heads.mask_head[0][1], torch.nn.BatchNorm2d)
    with torch.no_grad():
        detections = reference([torch.from_numpy(img / 255) for img in imgs])
    model = torchvision_weights.save_and_load(
        torch, reference, tmp_path / 'maskrcnn_v2.pth',
        torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2, 'coco', min_size=MIN_SIZE,
        max_size=MAX_SIZE)
    v1.assert_same_instances_as_torchvision(model, imgs, detections)


def test_torchvision_names_convert(torchvision):
    torch.manual_seed(1)
    reference = torchvision.models.detection.maskrcnn_resnet50_fpn_v2(
        weights=None, weights_backbone=None, num_classes=91)
    state = {key: value.numpy() for key, value in reference.state_dict().items()}
    model = torchvision_mask_rcnn_v2.MaskRCNNResNet50FPNV2(n_fg_class=80, min_size=64,
                                                         max_size=96)
    model.reset_head(90)  # 91 rows in both predictors, as torchvision's file
    model.n_unused_class = 10
    arrays = model.convert_weights(state, 'torchvision')
    assert int(arrays['n_unused_class']) == 10
    numpy.testing.assert_array_equal(arrays['mask_head/conv3/conv/W'],
                                     state['roi_heads.mask_head.2.0.weight'])
    numpy.testing.assert_array_equal(arrays['mask_head/conv4/bn/avg_mean'],
                                     state['roi_heads.mask_head.3.1.running_mean'])
    numpy.testing.assert_array_equal(arrays['head/conv1/bn/beta'],
                                     state['roi_heads.box_head.0.1.bias'])
    logits = state['roi_heads.mask_predictor.mask_fcn_logits.bias']
    for category, label in coco_category_id_to_label.items():
        assert arrays['mask_head/seg/b'][label + 1] == logits[category]
    # torchvision's parameter count (its docs: num_params 46,359,409)
    n_param = sum(p.numel() for p in reference.parameters())
    assert n_param == 46_359_409 == sum(p.size for p in model.params())
    with pytest.raises(errors.WeightLoadError, match='roi_heads.mask_head.4.1.weight'):
        model.convert_weights({**state, 'roi_heads.mask_head.4.1.weight': state[
            'roi_heads.mask_head.0.1.weight']}, 'torchvision')
