"""VOC data: a folder in VOC's layout (Annotations/<id>.xml, JPEGImages/<id>.jpg,
ImageSets/Main/*.txt), or VOC xml files beside their images (voc_flat: the exports of
LabelImg, CVAT and Roboflow)."""

import pathlib

from cvzoo import errors
from cvzoo.datasets.formats import voc_flat
from cvzoo.datasets.formats.splits import Splits
from cvzoo.datasets.voc.voc_bbox_dataset import VOCBboxDataset

LISTS = pathlib.Path('ImageSets', 'Main')


def _devkit_layout(root):
    return (root / LISTS).is_dir() and (root / 'Annotations').is_dir()


def matches(root):
    """What makes ``root`` VOC data (for messages), or None."""
    root = pathlib.Path(root)
    if _devkit_layout(root):
        return 'ImageSets/Main/ and Annotations/'
    return voc_flat.matches(root)


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


def read(root):
    """Splits of VOC data (``img, bbox, label``; difficult objects left out).

    In VOC's layout, class names are VOC's 20 when every name in the xml files is one of
    them, else the sorted names found; for xml files beside their images, see
    :func:`voc_flat.read`.
    """
    root = pathlib.Path(root)
    if not _devkit_layout(root):
        return voc_flat.read(root)
    train_split, val_split = split_names(root)
    train = VOCBboxDataset(root, split=train_split)
    val = None
    if val_split is not None:
        val = VOCBboxDataset(root, split=val_split, label_names=train.label_names)
    return Splits(train, val, train.label_names)
