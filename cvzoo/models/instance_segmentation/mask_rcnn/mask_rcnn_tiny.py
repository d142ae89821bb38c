"""MaskRCNNTiny: a small Mask R-CNN FPN to train from scratch on a CPU (not a published
architecture; no pretrained weights).

Made for cvzoo's training proof on generated shapes and for quick experiments on small
datasets. It is ChainerCV's Mask R-CNN FPN (:class:`~.mask_rcnn_fpn_resnet.
MaskRCNNFPNResNet`: its RPN, box head, mask head, losses, resize rule and post-processing)
with smaller parts: the FPN of 64 channels on five strided 3x3 conv-BN-ReLU layers
(:func:`~cvzoo.models.detection.tiny_fpn.tiny_fpn`) in place of the ResNet, anchors of
16 ... 256 pixels (ChainerCV's: 32 ... 512) for small images, a box head of two fc
layers of 256 (1024) and a mask head of 64 channels (256). Images are resized to a
shorter side of 96 pixels (longer at most 96) by default.
"""

from cvzoo.models import zoo
from cvzoo.models.detection import fpn, tiny_fpn
from cvzoo.models.detection.faster_rcnn.fpn import bbox_head, rpn
from cvzoo.models.instance_segmentation.mask_rcnn import mask_head, mask_rcnn_fpn_resnet


class TinyRPN(rpn.FPNRegionProposalNetwork):
    """ChainerCV's FPN RPN with anchors of 16 * 2 ** level and a 3x3 convolution of 64."""

    anchor_size = 16
    channels = tiny_fpn.CHANNELS


class TinyBboxHead(bbox_head.FPNBboxHead):
    """ChainerCV's FPN box head with fc layers of 256."""

    fc_size = 256


class TinyMaskHead(mask_head.MaskHead):
    """ChainerCV's mask head with convolutions of 64 channels."""

    channels = tiny_fpn.CHANNELS


@zoo.register('mask_rcnn_tiny', task='instance_segmentation')
class MaskRCNNTiny(mask_rcnn_fpn_resnet.MaskRCNNFPNResNet):
    """A small Mask R-CNN FPN (see the module docstring); no pretrained weights.

    Args:
        n_fg_class (int or None): classes to segment (default 80).
        pretrained_model (str or None): a local cvzoo .npz saved from this model.
        min_size, max_size (int): the resize rule (96 and 96).

    >>> model = MaskRCNNTiny(n_fg_class=3)
    >>> model.n_fg_class, model.extractor.channels, model.head.fc_size
    (3, 64, 256)
    """

    def __init__(self, n_fg_class=None, pretrained_model=None, *, min_size=96, max_size=96):
        super().__init__(None, n_fg_class, pretrained_model, min_size=min_size,
                         max_size=max_size)

    def make_parts(self, n_layer, n_class):
        """``(extractor, rpn, head, mask_head)`` for ``n_class`` classes (background
        included), those of the module docstring (``n_layer`` is unused)."""
        scales = fpn.FPN_SCALES
        return (tiny_fpn.tiny_fpn(), TinyRPN(scales, tiny_fpn.CHANNELS),
                TinyBboxHead(n_class, scales, tiny_fpn.CHANNELS),
                TinyMaskHead(n_class, scales, tiny_fpn.CHANNELS))

    def training_recipe(self, **hyper):
        """How this model trains: ChainerCV's FPN recipe with cvzoo's own numbers for a
        CPU (:func:`~.training_recipe.tiny_mask_rcnn_training_recipe`)."""
        from cvzoo.models.instance_segmentation.mask_rcnn import training_recipe

        return training_recipe.tiny_mask_rcnn_training_recipe(self, **hyper)


MaskRCNNTiny.weights = {}
