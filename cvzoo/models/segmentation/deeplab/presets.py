"""Weight entries of DeepLab V3+ on Xception-65: ChainerCV's conversions of the
TensorFlow DeepLab model zoo's frozen graphs (examples/deeplab/tf2npz.py).

ChainerCV publishes no hash, hence ``zoo.UNPUBLISHED``. Its preprocessing: the image
is padded at the bottom and right with the value 127.5 up to at least
``min_input_size`` (513x513; Cityscapes 1025x2049) and mapped to [-1, 1] by
``x / 127.5 - 1``, i.e. mean 127.5 and std 127.5 with zero padding afterwards.
"""

from cvzoo.datasets.ade20k import ade20k_label_names
from cvzoo.datasets.cityscapes import cityscapes_label_names
from cvzoo.datasets.voc import voc_label_names
from cvzoo.models import zoo

CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
SOURCE = ('ChainerCV examples/deeplab/README.md, "Ours (weight conversion)", scales (1.0,), '
          'no flip')
MEAN = (127.5, 127.5, 127.5)
STD = (127.5, 127.5, 127.5)
NOTES = ('TensorFlow DeepLab weights converted by ChainerCV. Padding is symmetric as in '
         "ChainerCV (TensorFlow's 'SAME' is the same on the odd sizes the padding to "
         'min_input_size gives, e.g. 513); bilinear resizes of rescaled inputs use '
         'half-pixel centres as OpenCV does.')
# (file name, label names, min_input_size, dataset, mIoU %) per weights key.
_FILES = {
    'voc': ('deeplabv3plus_xception65_voc_converted_2019_02_15.npz',
            voc_label_names.voc_semantic_segmentation_label_names, (513, 513),
            'voc2012_val', 82.36),
    'cityscapes': ('deeplabv3plus_xception65_cityscapes_converted_2019_02_15.npz',
                   cityscapes_label_names.cityscapes_semantic_segmentation_label_names,
                   (1025, 2049), 'cityscapes_val', 79.14),
    'ade20k': ('deeplabv3plus_xception65_ade20k_converted_2019_03_08.npz',
               ade20k_label_names.ade20k_semantic_segmentation_label_names, (513, 513),
               'ade20k_val', 42.52),
}


def preset(min_input_size):
    """DeepLab's preprocessing; ``size`` is the minimum input size (H, W)."""
    return zoo.Preset(size=tuple(min_input_size), mean=MEAN, std=STD,
                      interpolation='bilinear', resize_backend='cv2')


def deeplab_weights():
    """The weights entries of DeepLabV3plusXception65, keys 'voc', 'cityscapes', 'ade20k'."""
    entries = {}
    for key, (file_name, label_names, size, dataset, percent) in _FILES.items():
        entries[key] = zoo.Weights(
            url=CHAINERCV_URL + file_name, sha256=zoo.UNPUBLISHED,
            source_format='chainercv_npz', n_class=len(label_names), label_names=label_names,
            preset=preset(size),
            reported=zoo.Score('miou', round(percent / 100, 4), dataset, SOURCE),
            license='Apache-2.0', notes=NOTES, convert_from='chainercv')
    return entries
