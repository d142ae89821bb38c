"""FCN-ResNet50 and FCN-ResNet101: torchvision's FCN on a dilated ResNet."""

from cvzoo.models import zoo
from cvzoo.models.segmentation import torchvision_presets
from cvzoo.models.segmentation.dilated_resnet_segmenter import DilatedResNetSegmenter
from cvzoo.models.segmentation.fcn_head import FCNHead


@zoo.register('fcn_resnet50', task='semantic_segmentation')
class FCNResNet50(DilatedResNetSegmenter):
    """FCN (Long, Shelhamer and Darrell, "Fully Convolutional Networks for Semantic
    Segmentation", CVPR 2015) with a dilated ResNet-50 backbone, as torchvision builds it.

    Unlike the paper's FCN-8s (VGG-16 with skip connections), this is torchvision's
    variant: an :class:`FCNHead` on the stride-8 ``res5`` features of a dilated ResNet,
    scores resized bilinearly to the input.

    Weights keys: ``'coco_voc'`` (torchvision's fcn_resnet50_coco-1167a1af.pth, COCO images
    with the 21 VOC labels; mIoU 60.5 on the COCO val2017 VOC subset).

    Args:
        n_class, pretrained_model: as in :class:`DilatedResNetSegmenter`.
        **kwargs: ``aux``, ``source``, ``initialW`` of :class:`DilatedResNetSegmenter`.

    Example, with an image file of your own::

        model = FCNResNet50(n_class=21)
        labels = model.predict(['street.jpg'])
    """

    head_class = FCNHead

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(50, n_class, pretrained_model, **kwargs)


@zoo.register('fcn_resnet101', task='semantic_segmentation')
class FCNResNet101(DilatedResNetSegmenter):
    """FCN on a dilated ResNet-101; as :class:`FCNResNet50` otherwise.

    Weights keys: ``'coco_voc'`` (torchvision's fcn_resnet101_coco-7ecb50ca.pth; mIoU 63.7).
    """

    head_class = FCNHead

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(101, n_class, pretrained_model, **kwargs)


FCNResNet50.weights = {'coco_voc': torchvision_presets.torchvision_entry(
    'fcn_resnet50_coco-1167a1af.pth', 60.5, 91.4, page='fcn_resnet50')}
FCNResNet101.weights = {'coco_voc': torchvision_presets.torchvision_entry(
    'fcn_resnet101_coco-7ecb50ca.pth', 63.7, 91.9, page='fcn_resnet101')}
