"""CamVid semantic segmentation in the layout of the SegNet tutorial."""

import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.camvid import camvid_label_names
from cvzoo.utils import image, paths

VOID = 11


class CamVidDataset(dataset_mixin.DatasetMixin):
    """CamVid (SegNet tutorial): 367 train, 101 val, 233 test images of 480 x 360.

    Args:
        data_dir (str): 'auto' (``<dataset_root>/camvid``) or a folder holding
            ``<split>/``, ``<split>annot/`` and ``<split>.txt``. The list file holds the
            tutorial's absolute paths; only their file names are used.
        split (str): 'train', 'val' or 'test'.

    Example i is ``img, label``:

        img    (3, H, W) float32  RGB in [0, 255]
        label  (H, W) int32       index into camvid_label_names; void (11) becomes -1

    Raises:
        FileNotFoundError: the list file is absent (the SegNet tutorial data is not
            downloaded automatically; the message says where to put it).
    """

    label_names = camvid_label_names.camvid_label_names

    def __init__(self, data_dir='auto', split='train'):
        if split not in ('train', 'val', 'test'):
            raise ValueError(f"split: expected 'train', 'val' or 'test', got {split!r}")
        root = paths.dataset_root() / 'camvid' if data_dir == 'auto' else pathlib.Path(data_dir)
        list_file = root / f'{split}.txt'
        if not list_file.is_file():
            raise errors.MissingFileError(
                f'CamVid: {list_file} is absent; put the SegNet tutorial CamVid folder '
                f'(with {split}/, {split}annot/ and {split}.txt) at {root}')
        self.data_dir = root
        self.split = split
        with open(list_file) as f:
            pairs = [line.split() for line in f if line.strip()]
        self.files = [(pathlib.PurePosixPath(img_path).name, pathlib.PurePosixPath(lbl).name)
                      for img_path, lbl in pairs]

    def __len__(self):
        return len(self.files)

    def get_example(self, i):
        img_name, label_name = self.files[i]
        img = image.read_image(self.data_dir / self.split / img_name)
        label = image.read_label(self.data_dir / f'{self.split}annot' / label_name)
        label[label == VOID] = -1
        return img, label.astype(numpy.int32, copy=False)
