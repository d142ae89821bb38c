"""DirectoryParsingLabelDataset: a folder per class (ImageNet's train layout)."""

import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.utils import image

IMAGE_EXTENSIONS = ('.bmp', '.jpeg', '.jpg', '.png', '.ppm', '.tif', '.tiff', '.webp')


class DirectoryParsingLabelDataset(dataset_mixin.DatasetMixin):
    """Images in ``root/<class name>/...``; classes are the sorted sub-folder names.

    Args:
        root (str or Path): the folder of class folders (searched recursively inside).
        color (bool): read RGB (True) or one channel.

    Example i is ``img, label``: (3, H, W) float32 and () int32 index into
    ``self.label_names``.
    """

    def __init__(self, root, color=True):
        root = pathlib.Path(root)
        if not root.is_dir():
            raise errors.MissingFileError(f'root: {root} is not a folder')
        self.label_names = tuple(sorted(p.name for p in root.iterdir() if p.is_dir()))
        self.img_paths, labels = [], []
        for label, name in enumerate(self.label_names):
            found = sorted(p for p in (root / name).rglob('*')
                           if p.suffix.lower() in IMAGE_EXTENSIONS)
            self.img_paths += found
            labels += [label] * len(found)
        self.labels = numpy.array(labels, numpy.int32)
        self.color = color

    def __len__(self):
        return len(self.img_paths)

    def get_example(self, i):
        return image.read_image(self.img_paths[i], color=self.color), self.labels[i]
