"""A folder per class of images (classification), flat or split into train/ and val/."""

import pathlib

from cvzoo.datasets.formats.splits import VAL_NAMES, Splits
from cvzoo.datasets.image_folder.directory_parsing_label_dataset import (
    IMAGE_EXTENSIONS,
    DirectoryParsingLabelDataset,
)
from cvzoo.datasets.registry import check_class_folders


def _holds_images(folder):
    return any(p.suffix.lower() in IMAGE_EXTENSIONS for p in folder.rglob('*'))


def _subfolders(root):
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith('.'))


def split_folders(root):
    """(train folder, validation folder or None) of a ``train/`` + ``val/`` layout, or None
    when ``root`` is a flat folder per class."""
    names = {p.name for p in _subfolders(root)}
    if 'train' not in names or not names <= {'train', *VAL_NAMES}:
        return None
    if not any(_subfolders(root / 'train')):
        return None  # train/ holds images, not class folders: 'train' is a class
    val = next((root / name for name in VAL_NAMES if name in names), None)
    return root / 'train', val


def matches(root):
    """What makes ``root`` a folder per class (for messages), or None."""
    root = pathlib.Path(root)
    if not root.is_dir():
        return None
    classes = [p for p in _subfolders(root) if _holds_images(p)]
    if not classes or any(p.suffix.lower() in IMAGE_EXTENSIONS for p in root.iterdir()):
        return None
    return f'{len(classes)} folders of images'


def read(root, training=True):
    """Splits of a folder per class, or of its train/ and val/ folders.

    Raises:
        cvzoo.errors.UsageError: (``training``) fewer than two classes hold images.
    """
    root = pathlib.Path(root)
    folders = split_folders(root)
    train_root, val_root = folders if folders else (root, None)
    train = DirectoryParsingLabelDataset(train_root)
    if training:
        check_class_folders(train, train_root)
    val = DirectoryParsingLabelDataset(val_root) if val_root is not None else None
    return Splits(train, val, train.label_names)
