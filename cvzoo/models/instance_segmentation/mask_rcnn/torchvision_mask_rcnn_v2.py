"""MaskRCNNResNet50FPNV2: torchvision's ``maskrcnn_resnet50_fpn_v2`` (Li et al.,
"Benchmarking Detection Transfer Learning with Vision Transformers", 2021), its COCO
weights.

The box part is torchvision's Faster R-CNN v2
(:class:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn_v2.FasterRCNNResNet50FPNV2`:
BN with eps 1e-5 in the ResNet, the FPN and the four-convolution box head, two RPN
convolutions); the mask part is v1's
(:class:`~.torchvision_mask_rcnn.MaskRCNNResNet50FPN`: RoIAlign 14 x 14 of each
detection from torchvision's level, a 2 x 2 deconvolution, one 1 x 1 convolution per
class, torchvision's paste, masks at >= 0.5) but for the mask head's four 3 x 3
convolutions, which have no bias and are each followed by BN (eps 1e-5; torchvision's
``MaskRCNNHeads(256, [256] * 4, 1, norm_layer=BatchNorm2d)``).

BN uses its running statistics in test mode; in training (the torchvision Mask R-CNN
train chain) the BN of the FPN and of the box and mask heads normalise with the batch's
statistics, as torchvision's do, and the ResNet's stays frozen.

Differences from torchvision: those of Faster R-CNN v2 (NMS at IoU >= ``nms_thresh``,
torchvision >; the ResNet's BN frozen in training) and of Mask R-CNN v1 (masks returned
thresholded at >= 0.5, torchvision returns probabilities).
"""

from cvzoo.datasets.coco.coco_label_names import coco_instance_segmentation_label_names
from cvzoo.models import zoo
from cvzoo.models.detection import fpn
from cvzoo.models.detection.faster_rcnn import torchvision_fpn_v2
from cvzoo.models.instance_segmentation.mask_rcnn import torchvision_mask_rcnn


@zoo.register('maskrcnn_resnet50_fpn_v2', task='instance_segmentation')
class MaskRCNNResNet50FPNV2(torchvision_fpn_v2.TorchvisionV2Parts,
                            torchvision_mask_rcnn.MaskRCNNResNet50FPN):
    """torchvision's Mask R-CNN ResNet-50 FPN v2; see the module docstring.

    Weights keys: ``'coco'``, torchvision's ``MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1``
    (COCO 2017 train; mask AP 41.8, box AP 47.4 on val2017).

    Args:
        n_fg_class (int or None): classes to segment; None takes the weights' (80 without
            weights). A number other than the weights' re-makes ``head/loc``,
            ``head/conf`` and ``mask_head/seg`` (without unused classes).
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth with
            v2's names, or cvzoo .npz) or None for random weights.
        min_size, max_size, trainable_backbone_layers, bn_eps, source: as
            :class:`~cvzoo.models.detection.faster_rcnn.torchvision_fpn_v2.
            FasterRCNNResNet50FPNV2`.
        max_detections (int): instances kept per image (100).

    For example (the weights are downloaded)::

        masks, labels, scores = MaskRCNNResNet50FPNV2(pretrained_model='coco').predict(
            [img])
    """

    def make_mask_head(self, n_class):
        """The v2 mask head (``mask_head``): v1's with BN after each 3 x 3 convolution."""
        return torchvision_mask_rcnn.TorchvisionMaskHead(
            n_class, fpn.FPN_SCALES, bn_eps=torchvision_fpn_v2.BN_EPS)


_V1_ENTRY = torchvision_mask_rcnn.MaskRCNNResNet50FPN.weights['coco']
MaskRCNNResNet50FPNV2.weights = {
    'coco': zoo.Weights(
        url='https://download.pytorch.org/models/maskrcnn_resnet50_fpn_v2_coco-73cbd019.pth',
        sha256='73cbd019', source_format='torch_pth', n_class=80,
        label_names=tuple(coco_instance_segmentation_label_names), preset=_V1_ENTRY.preset,
        reported=zoo.Score('mask_map_coco', 0.418, 'coco_val2017',
                           'torchvision docs, MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1 '
                           '(mask_map 41.8, box_map 47.4, COCO val2017)'),
        notes="torchvision's v2 Mask R-CNN ResNet-50 FPN (Li et al. 2021 recipe, "
              'torchvision PR 5773); box AP 47.4. BN (eps 1e-5) in the ResNet, the FPN, '
              'the four-convolution box head and the mask head, two RPN convolutions. Its '
              '91-class box and mask predictors (COCO category ids) are reordered to the '
              "background, the 80 real classes in cvzoo's order and the ten unused ids, "
              'which stay in the softmax; masks pasted as torchvision pastes them and kept '
              'at >= 0.5.',
        convert_from='torchvision', box_convention='continuous', license='BSD-3-Clause'),
}
