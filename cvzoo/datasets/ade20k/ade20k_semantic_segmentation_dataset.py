"""ADE20K semantic segmentation (the ADEChallengeData2016 scene-parsing release)."""

import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin, download_archive
from cvzoo.datasets.ade20k import ade20k_label_names
from cvzoo.utils import image, paths

ADE20K_URL = 'http://data.csail.mit.edu/places/ADEchallenge/ADEChallengeData2016.zip'
ADE20K_SHA256 = None  # NOTE: no published checksum; None skips the check


class ADE20KSemanticSegmentationDataset(dataset_mixin.DatasetMixin):
    """ADE20K, 150 classes: annotation value v becomes class v - 1, and 0 becomes -1.

    Args:
        data_dir (str): 'auto' (``<dataset_root>/ade20k/ADEChallengeData2016``, downloaded
            from data.csail.mit.edu when absent) or that folder, holding
            ``images/{training,validation}/*.jpg`` and ``annotations/.../*.png``.
        split (str): 'train' or 'val'.

    Example i is ``img, label``:

        img    (3, H, W) float32  RGB in [0, 255]
        label  (H, W) int32       index into ade20k_semantic_segmentation_label_names, -1
                                  for the unlabelled pixels
    """

    label_names = ade20k_label_names.ade20k_semantic_segmentation_label_names

    def __init__(self, data_dir='auto', split='train'):
        folders = {'train': 'training', 'val': 'validation'}
        if split not in folders:
            raise ValueError(f"split: expected 'train' or 'val', got {split!r}")
        if data_dir == 'auto':
            root = paths.dataset_root() / 'ade20k' / 'ADEChallengeData2016'
            download_archive.download_archive(ADE20K_URL, root.parent,
                                              root / 'images' / folders[split],
                                              sha256=ADE20K_SHA256, what='ADE20K')
        else:
            root = pathlib.Path(data_dir)
        img_dir = root / 'images' / folders[split]
        self.img_paths = sorted(img_dir.glob('*.jpg'))
        if not self.img_paths:
            raise errors.MissingFileError(f'ADE20K: no .jpg under {img_dir}; unpack '
                                          f'ADEChallengeData2016.zip so that {img_dir} exists')
        self.label_paths = [root / 'annotations' / folders[split] / f'{p.stem}.png'
                            for p in self.img_paths]

    def __len__(self):
        return len(self.img_paths)

    def get_example(self, i):
        img = image.read_image(self.img_paths[i])
        label = image.read_label(self.label_paths[i]) - 1
        return img, label.astype(numpy.int32, copy=False)
