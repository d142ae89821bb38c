"""Weight entries of PSPNet: ChainerCV's Cityscapes and ADE20K models.

ChainerCV trained them itself (examples/pspnet/train_multi.py, 8 GPUs) and publishes no
hash, hence ``zoo.UNPUBLISHED``. Its evaluation (PSPNet.predict) runs a 713x713
(Cityscapes) or 473x473 (ADE20K) sliding window with the horizontal flip on images
from which the ImageNet mean is subtracted (RGB, no division by a std).
"""

from cvzoo.datasets.ade20k import ade20k_label_names
from cvzoo.datasets.cityscapes import cityscapes_label_names
from cvzoo.models import zoo

CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
SOURCE = ('ChainerCV examples/pspnet/README.md, "Ours" (trained with its train_multi.py; '
          'sliding window with flip)')
# RGB; ChainerCV's PSPNet subtracts this and divides by nothing.
MEAN = (123.68, 116.779, 103.939)
CITYSCAPES_SIZE = (713, 713)
ADE20K_SIZE = (473, 473)
NOTES = ('ChainerCV resizes with OpenCV when it is installed (PIL otherwise); cvzoo '
         'resizes bilinearly with half-pixel centres, as OpenCV does, without its '
         'fixed-point rounding.')
# (file name, n_class, label names, preset size, dataset) per weights key.
_FILES = {
    'cityscapes': ('pspnet_resnet{}_cityscapes_trained_2018_12_19.npz', 'cityscapes_val',
                   cityscapes_label_names.cityscapes_semantic_segmentation_label_names,
                   CITYSCAPES_SIZE),
    'ade20k': ('pspnet_resnet{}_ade20k_trained_2018_12_23.npz', 'ade20k_val',
               ade20k_label_names.ade20k_semantic_segmentation_label_names, ADE20K_SIZE),
}


def preset(size):
    """ChainerCV's PSPNet preprocessing at the input size ``size`` (H, W)."""
    return zoo.Preset(size=tuple(size), mean=MEAN, std=(1.0, 1.0, 1.0),
                      interpolation='bilinear', resize_backend='cv2')


def pspnet_weights(n_layer, miou_percent):
    """The weights entries of PSPNet on dilated ResNet-``n_layer``.

    Args:
        n_layer (int): 50 or 101.
        miou_percent (dict): weights key -> the mIoU (%) ChainerCV reports.
    """
    entries = {}
    for key, percent in miou_percent.items():
        file_name, dataset, label_names, size = _FILES[key]
        entries[key] = zoo.Weights(
            url=CHAINERCV_URL + file_name.format(n_layer), sha256=zoo.UNPUBLISHED,
            source_format='chainercv_npz', n_class=len(label_names),
            label_names=label_names, preset=preset(size),
            reported=zoo.Score('miou', round(percent / 100, 4), dataset, SOURCE),
            license='MIT (ChainerCV)', notes=NOTES, convert_from='chainercv')
    return entries
