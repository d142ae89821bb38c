"""Weight entries and preprocessing of torchvision's semantic segmenters.

torchvision (https://download.pytorch.org/models/) publishes the first 8 hex digits of
each file's sha256 in its name; the entries hold that prefix, which the zoo checks as a
prefix. Its FCN, DeepLabV3 and LR-ASPP weights were trained on the COCO train2017 images
that hold one of the 20 Pascal VOC categories, with VOC's 21 labels (background first).
torchvision reports their mIoU on the same subset of COCO val2017, not on VOC2012 val;
the entries say so in their score's source.

The preset is torchvision's ``SemanticSegmentation(resize_size=520)``: the shorter side
resized to 520 (PIL bilinear), the ImageNet mean and std. The network's scores are
resized back to the image's own size for predict().
"""

from cvzoo.datasets.voc import voc_label_names
from cvzoo.models import zoo
from cvzoo.models.common import imagenet_presets

TORCHVISION_URL = 'https://download.pytorch.org/models/'
SHORTER_SIDE = 520
TORCHVISION_PRESET = zoo.Preset(size=SHORTER_SIDE, mean=imagenet_presets.IMAGENET_MEAN,
                                std=imagenet_presets.IMAGENET_STD, interpolation='bilinear',
                                resize_backend='pil')
_SOURCE = ('torchvision docs, models/{page}: COCO-val2017-VOC-labels miou {miou} (pixel acc '
           '{pixel_acc}), i.e. the COCO val2017 images with a VOC category, labelled with the '
           '21 VOC classes; not Pascal VOC2012 val')


def torchvision_entry(file_name, miou_percent, pixel_acc_percent, *, page, notes=''):
    """A torchvision COCO-with-VOC-labels entry; the sha256 prefix is taken from the name.

    Args:
        file_name (str): e.g. ``'fcn_resnet50_coco-1167a1af.pth'``.
        miou_percent (float): the mIoU torchvision reports.
        pixel_acc_percent (float): the pixel accuracy torchvision reports (for the source).
        page (str): the torchvision docs page (e.g. ``'fcn_resnet50'``).
        notes (str): differences worth knowing.
    """
    prefix = file_name.rsplit('-', 1)[1].split('.')[0]
    source = _SOURCE.format(page=page, miou=miou_percent, pixel_acc=pixel_acc_percent)
    return zoo.Weights(
        url=TORCHVISION_URL + file_name, sha256=prefix, source_format='torch_pth',
        n_class=21, label_names=voc_label_names.voc_semantic_segmentation_label_names,
        preset=TORCHVISION_PRESET,
        reported=zoo.Score('miou', round(miou_percent / 100, 5), 'coco_val2017_voc_labels',
                           source),
        license='BSD-3-Clause', notes=notes, convert_from='torchvision')


def input_size(preset, img):
    """(h, w) a torchvision segmenter sees for ``img``: the preset's (H, W), or the image
    resized so that its shorter side is the preset's size."""
    if isinstance(preset.size, tuple):
        return preset.size
    return shorter_side_size(img.shape[1:], preset.size)


def shorter_side_size(size, shorter_side):
    """(H, W) with the shorter side ``shorter_side`` and the aspect ratio kept.

    The longer side is truncated, as torchvision's ``resize(img, shorter_side)``.

    >>> shorter_side_size((360, 480), 520), shorter_side_size((500, 375), 520)
    ((520, 693), (693, 520))
    """
    H, W = size
    if H <= W:
        return shorter_side, max(1, int(shorter_side * W / H))
    return max(1, int(shorter_side * H / W)), shorter_side
