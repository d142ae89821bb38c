"""The YOLO text layout: a ``data.yaml`` (given, or in the folder) naming the image
folders and the classes, or ``images/``, ``labels/`` of .txt files and ``classes.txt``
(Label Studio's export); labels of ``.../images/.../a.jpg`` in ``.../labels/.../a.txt``."""

import pathlib

from cvzoo.datasets.formats.splits import VAL_NAMES, Splits
from cvzoo.datasets.image_folder.class_list import CLASS_LIST, read_class_list
from cvzoo.datasets.yolo.data_yaml import read_data_yaml
from cvzoo.datasets.yolo.yolo_dataset import YOLOBboxDataset, image_paths

YAML_NAMES = ('data.yaml', 'data.yml')


def yaml_in(path):
    """The data.yaml of ``path``: the file itself, or the folder's data.yaml (else its
    only .yaml file, as Ultralytics names them after the dataset), or None."""
    path = pathlib.Path(path)
    if path.is_file():
        return path if path.suffix in ('.yaml', '.yml') else None
    found = [path / name for name in YAML_NAMES if (path / name).is_file()]
    if not found and path.is_dir():
        found = sorted(path.glob('*.yaml')) + sorted(path.glob('*.yml'))
        found = found if len(found) == 1 else []
    return found[0] if found else None


def _text_labels(root):
    labels = root / 'labels'
    return (root / 'images').is_dir() and labels.is_dir() and any(labels.rglob('*.txt'))


def matches(path):
    """What makes ``path`` YOLO data (for messages), or None."""
    path = pathlib.Path(path)
    if yaml_in(path) is not None:
        return f'{yaml_in(path).name}'
    if path.is_dir() and _text_labels(path) and (path / CLASS_LIST).is_file():
        return 'images/, labels/ of .txt files and classes.txt'
    return None


def _image_folders(root):
    """The images of the train split, and of the validation split (or None)."""
    images = root / 'images'
    if not (images / 'train').is_dir():
        return image_paths(images), None
    val = next((images / name for name in VAL_NAMES if (images / name).is_dir()), None)
    return image_paths(images / 'train'), image_paths(val) if val is not None else None


def read(path):
    """Splits of YOLO data (``img, bbox, label``)."""
    path = pathlib.Path(path)
    yaml_path = yaml_in(path)
    if yaml_path is not None:
        config = read_data_yaml(yaml_path)
        train_paths, val_paths, label_names = config.train, config.val, config.label_names
    else:
        label_names = read_class_list(path / CLASS_LIST)
        train_paths, val_paths = _image_folders(path)
    train = YOLOBboxDataset(train_paths, label_names)
    val = YOLOBboxDataset(val_paths, label_names) if val_paths is not None else None
    return Splits(train, val, label_names)
