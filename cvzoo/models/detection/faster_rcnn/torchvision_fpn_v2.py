"""FasterRCNNResNet50FPNV2: torchvision's ``fasterrcnn_resnet50_fpn_v2`` (Li et al.,
"Benchmarking Detection Transfer Learning with Vision Transformers", 2021), its COCO
weights.

What differs from v1 (:class:`~.torchvision_fpn.FasterRCNNResNet50FPN`, whose
preprocessing, anchors, proposals, RoI pooling, predictor, box decoding and
post-processing it keeps):

- the FPN's lateral and output layers are 1x1 and 3x3 convolutions without bias, each
  followed by BN (torchvision's ``norm_layer=BatchNorm2d``);
- the RPN's head has two 3x3 convolutions + ReLU (``RPNHead(conv_depth=2)``);
- the box head is ``FastRCNNConvFCHead``: four 3x3 convolutions (256 channels, BN, ReLU)
  and one fully connected layer (1024, ReLU)
  (:class:`~.torchvision_conv_fc_box_head.TorchvisionConvFCBoxHead`) in place of
  ``TwoMLPHead``;
- every BN has eps 1e-5, also the backbone's with the COCO weights (torchvision builds
  v2's ResNet with BatchNorm2d and loads the file as it is; v1 sets eps 0 for its file).

In test mode (predict()) every BN uses its running statistics. In training (cvzoo's
train chains under ``config.train``) the BN of the FPN and of the heads normalise with
the batch's statistics and update their averages, as torchvision's do; the ResNet's BN
stays frozen (see below).

Differences from torchvision: those of v1 (NMS drops a box at IoU >= ``nms_thresh``,
torchvision at >; ``head/loc`` and ``head/conf`` start as N(0, 0.001) and N(0, 0.01),
the FPN's convolutions as Glorot uniform); and the backbone's BN is frozen in training
(running statistics, gamma and beta fixed), while torchvision's v2 ResNet has trainable
BatchNorm2d whose stages outside ``trainable_backbone_layers`` only stop their
parameters, their BN still normalising with batch statistics in training mode.

Labels: as v1, torchvision's 91-class COCO predictor becomes the background, the 80
labels and the ten unused ids (``n_unused_class``), which enter the softmax and are
never returned.
"""

from cvzoo.datasets.coco.coco_label_names import coco_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.detection import fpn
from cvzoo.models.detection.faster_rcnn import (
    torchvision_conv_fc_box_head,
    torchvision_fpn,
    torchvision_names,
)

BN_EPS = torchvision_conv_fc_box_head.BN_EPS


class TorchvisionV2Parts:
    """Mixin of torchvision's v2 R-CNNs over their v1 classes: BN in the FPN
    (``fpn_bn_eps``), two RPN convolutions, the conv-fc box head, BN eps 1e-5 with
    pretrained weights and the v2 names of torchvision's files
    (:func:`torchvision_names.map_key_v2`)."""

    pretrained_bn_eps = BN_EPS
    fpn_bn_eps = BN_EPS
    rpn_conv_depth = 2
    map_torchvision_key = staticmethod(torchvision_names.map_key_v2)

    def make_box_head(self, n_class):
        """The v2 box head (``head``) for ``n_class`` classes."""
        return torchvision_conv_fc_box_head.TorchvisionConvFCBoxHead(
            n_class, fpn.FPN_SCALES)


@zoo.register('fasterrcnn_resnet50_fpn_v2', task='detection')
class FasterRCNNResNet50FPNV2(TorchvisionV2Parts, torchvision_fpn.FasterRCNNResNet50FPN):
    """torchvision's Faster R-CNN ResNet-50 FPN v2; see the module docstring.

    Weights keys: ``'coco'``, torchvision's ``FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1``
    (COCO 2017 train; box AP 46.7 on val2017).

    Args:
        n_fg_class (int or None): classes to detect; None takes the weights' (80 without
            weights). A number other than the weights' re-makes ``head/loc`` and
            ``head/conf`` (without unused classes).
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth with
            v2's names, or cvzoo .npz) or None for random weights.
        min_size, max_size (int): the resize rule (800 and 1333).
        trainable_backbone_layers (int): 0 ... 5, ResNet's stages left trainable from the
            top (default 3); the ResNet's BN is always frozen.
        bn_eps (float or None): the ResNet's BN epsilon (> 0); None is 1e-5, torchvision's
            (the FPN's and heads' BN always have 1e-5).
        source (str or None): names of a local file ('torchvision' or 'cvzoo').

    Example (downloads the COCO weights)::

        bboxes, labels, scores = FasterRCNNResNet50FPNV2(pretrained_model='coco').predict(
            [img])
    """


_V1_ENTRY = torchvision_fpn.FasterRCNNResNet50FPN.weights['coco']
FasterRCNNResNet50FPNV2.weights = {
    'coco': zoo.Weights(
        url='https://download.pytorch.org/models/fasterrcnn_resnet50_fpn_v2_coco-dd69338a.pth',
        sha256='dd69338a', source_format='torch_pth', n_class=80,
        label_names=tuple(coco_bbox_label_names), preset=_V1_ENTRY.preset,
        reported=zoo.Score('map_coco', 0.467, 'coco_val2017',
                           'torchvision docs, FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1 '
                           '(box_map 46.7, COCO val2017)'),
        notes="torchvision's v2 Faster R-CNN ResNet-50 FPN (Li et al. 2021 recipe, "
              'torchvision PR 5763): BN (eps 1e-5) in the ResNet, the FPN and the '
              'four-convolution box head, two RPN convolutions. Its 91-class predictor '
              "(COCO category ids) is reordered to the background, the 80 real classes in "
              "cvzoo's order and the ten unused ids, which stay in the softmax; resize "
              '(bilinear, no antialias, min size 800, max size 1333) and padding to '
              'multiples of 32 as v1.',
        convert_from='torchvision', box_convention='continuous', license='BSD-3-Clause'),
}
