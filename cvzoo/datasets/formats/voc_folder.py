"""A VOC-layout folder: Annotations/<id>.xml, JPEGImages/<id>.jpg, ImageSets/Main/*.txt."""

import pathlib

from cvzoo import errors
from cvzoo.datasets.formats.splits import Splits
from cvzoo.datasets.voc.voc_bbox_dataset import VOCBboxDataset

LISTS = pathlib.Path('ImageSets', 'Main')


def matches(root):
    """What makes ``root`` a VOC folder (for messages), or None."""
    root = pathlib.Path(root)
    if (root / LISTS).is_dir() and (root / 'Annotations').is_dir():
        return 'ImageSets/Main/ and Annotations/'
    return None


def _listed(root, split):
    """True when ImageSets/Main/<split>.txt exists and names an image."""
    path = root / LISTS / f'{split}.txt'
    return path.is_file() and bool(path.read_text().split())


def split_names(root):
    """(train list, validation list or None): train.txt with val.txt; trainval.txt (else
    train.txt) with test.txt; else trainval.txt or train.txt alone."""
    whole = 'trainval' if _listed(root, 'trainval') else 'train'
    if _listed(root, 'val') and _listed(root, 'train'):
        return 'train', 'val'
    if _listed(root, 'test'):
        return whole, 'test'
    if not _listed(root, whole):
        raise errors.MissingFileError(f'data: {root / LISTS} lists no images: expected '
                                      f'train.txt or trainval.txt (and val.txt or test.txt)')
    return whole, None


def read(root, label_names=None):
    """Splits of a VOC folder (``img, bbox, label``; difficult objects left out).

    Class names are VOC's 20 when every name in the xml files is one of them, else the
    sorted names found (``label_names`` given: those).
    """
    root = pathlib.Path(root)
    train_split, val_split = split_names(root)
    train = VOCBboxDataset(root, split=train_split, label_names=label_names)
    val = None
    if val_split is not None:
        val = VOCBboxDataset(root, split=val_split, label_names=train.label_names)
    return Splits(train, val, train.label_names)
