"""KeypointRCNNTiny: a small Keypoint R-CNN to train from scratch on a CPU (not a
published architecture; no pretrained weights).

Made for cvzoo's training proof on generated shapes and for quick experiments on small
datasets. It is torchvision's Keypoint R-CNN (:class:`~.keypoint_rcnn.
KeypointRCNNResNet50FPN`: its RPN, box head, keypoint head, losses, resize rule and
post-processing) with smaller parts: the FPN of 64 channels on five strided 3x3
conv-BN-ReLU layers (:func:`~cvzoo.models.detection.tiny_fpn.tiny_fpn`) in place of the
frozen ResNet-50 (its BN layers train), anchors of 16 ... 256 pixels (torchvision's:
32 ... 512) for small images, a box head of two fc layers of 256 (1024) and a keypoint
head of four 3x3 convolutions of 64 channels (eight of 512). Images are resized to a
shorter side of 96 pixels (longer at most 96) by default.
"""

from cvzoo.models import zoo
from cvzoo.models.detection import tiny_fpn
from cvzoo.models.detection.faster_rcnn import (
    torchvision_box_head,
    torchvision_fpn,
    torchvision_rpn,
)
from cvzoo.models.keypoint_detection import keypoint_head, keypoint_rcnn

ANCHOR_SIZES = (16, 32, 64, 128, 256)


class TinyBoxHead(torchvision_box_head.TorchvisionBoxHead):
    """torchvision's box head with fc layers of 256."""

    fc_size = 256


class TinyKeypointHead(keypoint_head.KeypointHead):
    """torchvision's keypoint head with four convolutions of 64 channels."""

    n_layer = 4
    channels = tiny_fpn.CHANNELS


@zoo.register('keypoint_rcnn_tiny', task='keypoint_detection')
class KeypointRCNNTiny(keypoint_rcnn.KeypointRCNNResNet50FPN):
    """A small Keypoint R-CNN (see the module docstring); no pretrained weights.

    Args:
        n_fg_class (int or None): classes to detect (default 1).
        pretrained_model (str or None): a local cvzoo .npz saved from this model (its
            class and keypoint counts are read first).
        n_point (int or None): keypoints per instance (default 17).
        max_detections (int): instances kept per image (100).
        min_size, max_size (int): the resize rule (96 and 96).

    >>> model = KeypointRCNNTiny(n_fg_class=3, n_point=5)
    >>> model.n_fg_class, model.n_point, model.keypoint_head.channels
    (3, 5, 64)
    """

    box_head_class = TinyBoxHead
    keypoint_head_class = TinyKeypointHead

    def __init__(self, n_fg_class=None, pretrained_model=None, *, n_point=None,
                 max_detections=100, min_size=96, max_size=96):
        super().__init__(n_fg_class, pretrained_model, n_point=n_point,
                         max_detections=max_detections, min_size=min_size, max_size=max_size)

    def build_box_part(self, n_fg_class, *, min_size, max_size, **unused):
        """Build the parts of the module docstring for ``n_fg_class`` classes (the
        ResNet's options, ``unused``, do not apply)."""
        torchvision_fpn.assemble(
            self, tiny_fpn.tiny_fpn(),
            torchvision_rpn.TorchvisionRPN(tiny_fpn.CHANNELS, ANCHOR_SIZES), n_fg_class + 1, 0,
            min_size, max_size)

    def features(self, x):
        """The FPN's maps of a prepared batch (its BN layers in the current mode)."""
        return self.extractor(x)

    def training_recipe(self, **hyper):
        """How this model trains: torchvision's Keypoint R-CNN recipe with cvzoo's own
        numbers for a CPU (:func:`~cvzoo.models.keypoint_detection.training_recipe.
        tiny_keypoint_rcnn_training_recipe`)."""
        from cvzoo.models.keypoint_detection import training_recipe

        return training_recipe.tiny_keypoint_rcnn_training_recipe(self, **hyper)


KeypointRCNNTiny.weights = {}
