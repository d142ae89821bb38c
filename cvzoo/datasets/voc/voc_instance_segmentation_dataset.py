"""PASCAL VOC instance segmentation (SegmentationObject + SegmentationClass PNGs)."""

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.voc import voc_label_names, voc_paths
from cvzoo.utils import image


def masks_from_label_images(instance, label, path):
    """Split an instance-id image into masks and look up each one's class.

    Args:
        instance: (H, W) int, 0 = background, 255 (or -1) = border, k = k-th object.
        label: (H, W) int class image of the same size, 0 = background, c = class c - 1.
        path: named in errors.

    Returns:
        mask (R, H, W) bool and label (R,) int32, one per instance id present.
    """
    ids = numpy.unique(instance)
    ids = ids[(ids > 0) & (ids != 255)]
    masks = instance[None] == ids[:, None, None]
    labels = numpy.zeros(len(ids), numpy.int32)
    for k, mask in enumerate(masks):
        classes = numpy.unique(label[mask])
        classes = classes[(classes > 0) & (classes != 255)]
        if len(classes) != 1:
            raise errors.CorruptFileError(f'{path}: instance {int(ids[k])} covers classes '
                                          f'{classes.tolist()}, expected exactly one')
        labels[k] = classes[0] - 1
    return masks, labels


class VOCInstanceSegmentationDataset(dataset_mixin.DatasetMixin):
    """PASCAL VOC 2012 instance segmentation, 20 classes.

    Args:
        data_dir (str): 'auto' or a VOC-layout folder with ``JPEGImages/``,
            ``SegmentationObject/``, ``SegmentationClass/`` and
            ``ImageSets/Segmentation/<split>.txt``.
        split (str): 'train', 'val' or 'trainval'.
        year (str): '2012' (with 'auto').

    Example i is ``img, mask, label``:

        img    (3, H, W) float32  RGB in [0, 255]
        mask   (R, H, W) bool     one mask per object (the 255 border belongs to none)
        label  (R,) int32         index into voc_bbox_label_names
    """

    label_names = voc_label_names.voc_bbox_label_names

    def __init__(self, data_dir='auto', split='train', year='2012'):
        self.data_dir = voc_paths.resolve_voc_dir(data_dir, split, year, 'Segmentation')
        self.ids = voc_paths.read_ids(self.data_dir, split, 'Segmentation')

    def __len__(self):
        return len(self.ids)

    def get_example(self, i):
        img = image.read_image(self.data_dir / 'JPEGImages' / f'{self.ids[i]}.jpg')
        instance_path = self.data_dir / 'SegmentationObject' / f'{self.ids[i]}.png'
        instance = image.read_label(instance_path)
        label = image.read_label(self.data_dir / 'SegmentationClass' / f'{self.ids[i]}.png')
        mask, label = masks_from_label_images(instance, label, instance_path)
        return img, mask, label
