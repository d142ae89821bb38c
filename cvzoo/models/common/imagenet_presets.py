"""Weight entries of the ImageNet classifiers from torchvision and ChainerCV.

torchvision (https://download.pytorch.org/models/) publishes the first 8 hex digits of
each file's sha256 in its name; the entries hold that prefix, which the zoo checks as a
prefix. ChainerCV (https://chainercv-models.preferred.jp/) publishes no hash; those
entries hold ``zoo.UNPUBLISHED`` (the first download records the file's sha256 and later
loads verify against it).

Presets:

- torchvision V1: shorter side 256, center crop 224, its mean/std, PIL bilinear;
- torchvision V2: shorter side 232 (ResNet-50/101/152, ResNeXt-50), crop 224;
- ChainerCV: shorter side 256, center crop 224, the mean of the Caffe ResNet mean image
  (RGB) and no std; ChainerCV reports its scores with the OpenCV resize.
"""

from cvzoo.datasets.imagenet import imagenet_label_names
from cvzoo.models import zoo

# RGB on [0, 255]: 255 times torchvision's ImageNet mean and std
IMAGENET_MEAN = (123.675, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)
TORCHVISION_URL = 'https://download.pytorch.org/models/'
CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
TORCHVISION_DOCS = 'torchvision docs, models/{} (ImageNet-1K acc@1, single 224 crop)'
CHAINERCV_DOCS = ('ChainerCV examples/classification/README.md, single center crop '
                  '(original: {})')
# RGB; the channel means of the mean image of github.com/KaimingHe/deep-residual-networks
CHAINERCV_MEAN = (123.15163084, 115.90288257, 103.0626238)

TORCHVISION_V1 = zoo.Preset(size=224, mean=IMAGENET_MEAN, std=IMAGENET_STD,
                            interpolation='bilinear', resize_backend='pil', crop_fraction=0.875)
TORCHVISION_V2 = zoo.Preset(size=224, mean=IMAGENET_MEAN, std=IMAGENET_STD,
                            interpolation='bilinear', resize_backend='pil',
                            crop_fraction=224 / 232)
CHAINERCV = zoo.Preset(size=224, mean=CHAINERCV_MEAN, interpolation='bilinear',
                       resize_backend='cv2', crop_fraction=0.875)


def torchvision_entry(file_name, top1_percent, *, page, v2=False, notes=''):
    """A torchvision ImageNet entry; the sha256 prefix is taken from the file name.

    Args:
        file_name (str): e.g. ``'resnet50-0676ba61.pth'``.
        top1_percent (float): the acc@1 torchvision reports.
        page (str): the torchvision docs page (e.g. ``'resnet'``).
        v2 (bool): the V2 recipe (resize to 232 before the 224 crop).
        notes (str): differences worth knowing.
    """
    prefix = file_name.rsplit('-', 1)[1].split('.')[0]
    return zoo.Weights(
        url=TORCHVISION_URL + file_name, sha256=prefix, source_format='torch_pth',
        n_class=1000, label_names=imagenet_label_names.imagenet_label_names,
        preset=TORCHVISION_V2 if v2 else TORCHVISION_V1,
        reported=zoo.Score('top1', round(top1_percent / 100, 5), 'imagenet_val',
                           TORCHVISION_DOCS.format(page)),
        license='BSD-3-Clause', notes=notes, convert_from='torchvision')


def chainercv_entry(file_name, top1_error_percent, *, original, preset=CHAINERCV, notes=''):
    """A ChainerCV ImageNet entry (no published hash).

    Args:
        file_name (str): e.g. ``'resnet50_imagenet_converted_2018_03_07.npz'``.
        top1_error_percent (float): the single-crop top-1 error ChainerCV reports.
        original (str): the paper's own error, for the score's source.
        preset (zoo.Preset): the preprocessing.
        notes (str): differences worth knowing.
    """
    return zoo.Weights(
        url=CHAINERCV_URL + file_name, sha256=zoo.UNPUBLISHED, source_format='chainercv_npz',
        n_class=1000, label_names=imagenet_label_names.imagenet_label_names, preset=preset,
        reported=zoo.Score('top1', round(1 - top1_error_percent / 100, 5), 'imagenet_val',
                           CHAINERCV_DOCS.format(original)),
        license='MIT (ChainerCV)', notes=notes, convert_from='chainercv')
