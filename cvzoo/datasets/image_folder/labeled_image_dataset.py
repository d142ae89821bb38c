"""LabeledImageDataset: images and class ids from a "path label" list (ImageNet val)."""

import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.utils import image


class LabeledImageDataset(dataset_mixin.DatasetMixin):
    """Images listed with their labels.

    Args:
        pairs (str, Path or list): a text file with one ``path label`` per line, or a
            list of ``(path, label)`` pairs.
        root (str or Path): the folder the paths are relative to.
        color (bool): read RGB (True) or one channel.

    Example i is ``img, label``: (3, H, W) float32 and () int32.
    """

    def __init__(self, pairs, root='.', color=True):
        if isinstance(pairs, (str, pathlib.Path)):
            pairs = self._read_list(pathlib.Path(pairs))
        self.img_paths = [str(path) for path, _ in pairs]
        self.labels = numpy.array([int(label) for _, label in pairs], numpy.int32)
        self.root = pathlib.Path(root)
        self.color = color

    @staticmethod
    def _read_list(list_path):
        pairs = []
        with open(list_path) as f:
            for line_number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                path, _, label = line.strip().rpartition(' ')
                if not path or not label.lstrip('-').isdigit():
                    raise errors.CorruptFileError(
                        f'{list_path}: line {line_number}: expected "path label", got '
                        f'{line.strip()!r}')
                pairs.append((path, int(label)))
        return pairs

    def __len__(self):
        return len(self.img_paths)

    def get_example(self, i):
        img = image.read_image(self.root / self.img_paths[i], color=self.color)
        return img, self.labels[i]
