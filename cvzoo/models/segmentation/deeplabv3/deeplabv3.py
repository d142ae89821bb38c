"""DeepLabV3-ResNet50 and DeepLabV3-ResNet101: torchvision's DeepLabV3 models."""

from cvzoo.models import zoo
from cvzoo.models.segmentation import torchvision_presets
from cvzoo.models.segmentation.deeplabv3.deeplab_head import DeepLabHead
from cvzoo.models.segmentation.dilated_resnet_segmenter import DilatedResNetSegmenter


@zoo.register('deeplabv3_resnet50', task='semantic_segmentation')
class DeepLabV3ResNet50(DilatedResNetSegmenter):
    """DeepLabV3 (Chen, Papandreou, Schroff and Adam, "Rethinking Atrous Convolution for
    Semantic Image Segmentation", arXiv:1706.05587, 2017) on a dilated ResNet-50, as
    torchvision builds it.

    A :class:`DeepLabHead` (ASPP with rates 12, 24, 36) on the stride-8 ``res5``
    features, scores resized bilinearly to the input; an auxiliary FCN head on ``res4``
    for training. Differences from the paper: torchvision's ASPP has no multi-grid in
    ``res5`` and the model is evaluated at one scale without flipping.

    Weights keys: ``'coco_voc'`` (torchvision's deeplabv3_resnet50_coco-cd0a2569.pth,
    COCO images with the 21 VOC labels; mIoU 66.4 on the COCO val2017 VOC subset).

    Args:
        n_class, pretrained_model: as in :class:`DilatedResNetSegmenter`.
        **kwargs: ``aux``, ``source``, ``initialW`` of :class:`DilatedResNetSegmenter`.

    Example (downloads the weights)::

        model = DeepLabV3ResNet50(pretrained_model='coco_voc')
        labels = model.predict(['street.jpg'])
    """

    head_class = DeepLabHead

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(50, n_class, pretrained_model, **kwargs)


@zoo.register('deeplabv3_resnet101', task='semantic_segmentation')
class DeepLabV3ResNet101(DilatedResNetSegmenter):
    """DeepLabV3 on a dilated ResNet-101; as :class:`DeepLabV3ResNet50` otherwise.

    Weights keys: ``'coco_voc'`` (torchvision's deeplabv3_resnet101_coco-586e9e4e.pth;
    mIoU 67.4).
    """

    head_class = DeepLabHead

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(101, n_class, pretrained_model, **kwargs)


DeepLabV3ResNet50.weights = {'coco_voc': torchvision_presets.torchvision_entry(
    'deeplabv3_resnet50_coco-cd0a2569.pth', 66.4, 92.4, page='deeplabv3_resnet50')}
DeepLabV3ResNet101.weights = {'coco_voc': torchvision_presets.torchvision_entry(
    'deeplabv3_resnet101_coco-586e9e4e.pth', 67.4, 92.4, page='deeplabv3_resnet101')}
