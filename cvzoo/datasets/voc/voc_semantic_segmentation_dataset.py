"""PASCAL VOC semantic segmentation (SegmentationClass PNGs)."""

import numpy

from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.voc import voc_label_names, voc_paths
from cvzoo.utils import image


class VOCSemanticSegmentationDataset(dataset_mixin.DatasetMixin):
    """PASCAL VOC 2012 semantic segmentation, 21 classes with background.

    Args:
        data_dir (str): 'auto' (``<dataset_root>/voc/VOCdevkit/VOC2012``, downloaded when
            absent) or a VOC-layout folder with ``JPEGImages/``, ``SegmentationClass/``
            and ``ImageSets/Segmentation/<split>.txt``.
        split (str): 'train', 'val' or 'trainval'.
        year (str): '2012' or '2007' (with 'auto').

    Example i is ``img, label``:

        img    (3, H, W) float32  RGB in [0, 255]
        label  (H, W) int32       index into voc_semantic_segmentation_label_names;
                                  the 255 border pixels become -1
    """

    label_names = voc_label_names.voc_semantic_segmentation_label_names

    def __init__(self, data_dir='auto', split='train', year='2012'):
        self.data_dir = voc_paths.resolve_voc_dir(data_dir, split, year, 'Segmentation')
        self.ids = voc_paths.read_ids(self.data_dir, split, 'Segmentation')

    def __len__(self):
        return len(self.ids)

    def get_example(self, i):
        img = image.read_image(self.data_dir / 'JPEGImages' / f'{self.ids[i]}.jpg')
        label = image.read_label(self.data_dir / 'SegmentationClass' / f'{self.ids[i]}.png')
        label[label == 255] = -1
        return img, label.astype(numpy.int32, copy=False)
