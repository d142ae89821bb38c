"""Cityscapes semantic segmentation (fine annotations, 19 training classes)."""

import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.cityscapes import cityscapes_label_names
from cvzoo.utils import image, paths

_LOOKUP = numpy.full(256, -1, numpy.int32)
for _label_id, _train_id in cityscapes_label_names.cityscapes_label_id_to_train_id.items():
    _LOOKUP[_label_id] = _train_id


class CityscapesSemanticSegmentationDataset(dataset_mixin.DatasetMixin):
    """Cityscapes with fine labels: labelIds mapped to the 19 train ids, others to -1.

    Args:
        data_dir (str): 'auto' (``<dataset_root>/cityscapes``) or a folder holding
            ``leftImg8bit/<split>/<city>/*_leftImg8bit.png`` and
            ``gtFine/<split>/<city>/*_gtFine_labelIds.png`` (Cityscapes needs a login,
            so nothing is downloaded).
        split (str): 'train', 'val' or 'test'.

    Example i is ``img, label``:

        img    (3, H, W) float32  RGB in [0, 255]
        label  (H, W) int32       train id in 0..18, -1 = ignored
    """

    label_names = cityscapes_label_names.cityscapes_semantic_segmentation_label_names

    def __init__(self, data_dir='auto', split='train'):
        if split not in ('train', 'val', 'test'):
            raise ValueError(f"split: expected 'train', 'val' or 'test', got {split!r}")
        root = paths.dataset_root() / 'cityscapes' if data_dir == 'auto' else pathlib.Path(
            data_dir)
        img_dir = root / 'leftImg8bit' / split
        self.img_paths = sorted(img_dir.glob('*/*_leftImg8bit.png'))
        if not self.img_paths:
            raise errors.MissingFileError(
                f'Cityscapes: no *_leftImg8bit.png under {img_dir}; download leftImg8bit and '
                f'gtFine from cityscapes-dataset.com and unpack them into {root}')
        self.label_paths = [
            root / 'gtFine' / split / p.parent.name
            / p.name.replace('_leftImg8bit.png', '_gtFine_labelIds.png')
            for p in self.img_paths]

    def __len__(self):
        return len(self.img_paths)

    def get_example(self, i):
        img = image.read_image(self.img_paths[i])
        label_id = image.read_label(self.label_paths[i])
        return img, _LOOKUP[numpy.clip(label_id, 0, 255)]
