"""A Mask R-CNN FPN small enough to train from scratch on a CPU in minutes.

``MaskRCNNFPNResNet50`` takes no smaller backbone, so this one is built as it is and its
ResNet-50 is replaced by five 3x3 convolutions with batch normalisation (strides 2, 2,
2, 2, 2: maps at 1/4 ... 1/32 with 32, 64, 128 and 128 channels) under the same FPN
neck; the RPN, box head and mask head are the model's own. Its train chain samples
fewer RoIs per image than the paper's 512, which is what a CPU pays for most (each
RoI's 7x7 pooling and fc layers, and each foreground RoI's mask head).

Trained from scratch (measured through the former cvzoo.models.train_mask_rcnn, whose
settings the ChainerCV recipe of cvzoo.training.train keeps) on 400 generated 96x96 images of
non-overlapping shapes (tests.helpers.coco_shapes), batches of 4 images, lr 0.02 and 64
RoIs per image reach mask mAP@0.5 1.0 on 50 held-out images in 1,900 iterations; batches
of 2 stay near 0.35 (bench/train_small_mask_rcnn.py; the table is in
docs/train_instance_segmentation.md).
"""

import numpy

import cvzoo.core.links as L
from cvzoo.models.detection import fpn
from cvzoo.models.detection.faster_rcnn.fpn.faster_rcnn_fpn_resnet import FPN_SCALES
from cvzoo.models.detection.faster_rcnn.proposal_target_creator import ProposalTargetCreator
from cvzoo.models.instance_segmentation.mask_rcnn.mask_rcnn_fpn_resnet import (
    MaskRCNNFPNResNet50,
)
from cvzoo.models.instance_segmentation.mask_rcnn.mask_rcnn_train_chain import (
    MaskRCNNTrainChain,
)

CHANNELS = (32, 64, 128, 128)


class SmallBase(L.Chain):
    """(B, 3, H, W) -> four maps at 1/4, 1/8, 1/16 and 1/32 of the input."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv1 = L.Conv2DBNActiv(3, 32, 3, 2, 1, nobias=True)
            self.conv2 = L.Conv2DBNActiv(32, CHANNELS[0], 3, 2, 1, nobias=True)
            self.conv3 = L.Conv2DBNActiv(CHANNELS[0], CHANNELS[1], 3, 2, 1, nobias=True)
            self.conv4 = L.Conv2DBNActiv(CHANNELS[1], CHANNELS[2], 3, 2, 1, nobias=True)
            self.conv5 = L.Conv2DBNActiv(CHANNELS[2], CHANNELS[3], 3, 2, 1, nobias=True)

    def forward(self, x):
        h2 = self.conv2(self.conv1(x))
        h3 = self.conv3(h2)
        h4 = self.conv4(h3)
        return h2, h3, h4, self.conv5(h4)


def build_small_mask_rcnn(n_fg_class, size, seed=0):
    """A Mask R-CNN FPN on :class:`SmallBase` resizing images to ``size`` pixels."""
    numpy.random.seed(seed)
    model = MaskRCNNFPNResNet50(n_fg_class=n_fg_class, min_size=size, max_size=size)
    delattr(model, 'extractor')
    with model.init_scope():
        model.extractor = fpn.FPN(SmallBase(), CHANNELS, FPN_SCALES)
    return model


def small_train_chain(model, n_sample=64):
    """The model's train chain with ``n_sample`` RoIs per image (a quarter foreground at
    most, as the paper's)."""
    return MaskRCNNTrainChain(model, proposal_target_creator=ProposalTargetCreator(
        n_sample, 0.25, 0.5, 0.5, 0.0))
