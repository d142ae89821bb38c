"""Image and label-map folders with a class list (semantic segmentation).

``images/<stem>.<ext>``, ``labels/<stem>.png`` (one channel, the class id of each pixel,
255 not scored) and ``classes.txt`` (a class name a line, class 0 first); or the same
split into ``images/train/``, ``images/val/``, ``labels/train/`` and ``labels/val/``.
"""

import pathlib

from cvzoo import errors
from cvzoo.datasets.formats.splits import VAL_NAMES, Splits
from cvzoo.datasets.image_folder.class_list import CLASS_LIST, read_class_list
from cvzoo.datasets.image_folder.image_label_directory_dataset import ImageLabelDirectoryDataset

IGNORE_LABEL = 255


def matches(root):
    """What makes ``root`` such a folder (for messages), or None."""
    root = pathlib.Path(root)
    labels = root / 'labels'
    if not ((root / 'images').is_dir() and labels.is_dir()):
        return None
    if not any(labels.rglob('*.png')) or any(labels.rglob('*.txt')):
        return None
    return 'images/ and labels/ of PNG label maps'


def _folders(root):
    """[(images, labels)] of the train split, then of the validation split if any."""
    images, labels = root / 'images', root / 'labels'
    if not (images / 'train').is_dir():
        return [(images, labels)]
    pairs = [(images / 'train', labels / 'train')]
    for name in VAL_NAMES:
        if (images / name).is_dir():
            return pairs + [(images / name, labels / name)]
    return pairs


def read(root):
    """Splits of a segmentation folder; labels (H, W) int32 with 255 read as -1."""
    root = pathlib.Path(root)
    if not (root / CLASS_LIST).is_file():
        raise errors.MissingFileError(
            f'data: {root} holds images/ and labels/ but no {CLASS_LIST} (the class names, '
            f'one a line, class 0 first)')
    label_names = read_class_list(root / CLASS_LIST)
    datasets = [ImageLabelDirectoryDataset(images, labels, IGNORE_LABEL, label_names)
                for images, labels in _folders(root)]
    return Splits(datasets[0], datasets[1] if len(datasets) > 1 else None, label_names)
