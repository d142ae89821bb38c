"""Read a YOLO ``data.yaml`` (Ultralytics' dataset file, as Roboflow and CVAT export it)."""

import dataclasses
import pathlib

from cvzoo import errors
from cvzoo.datasets.yolo import yolo_dataset


@dataclasses.dataclass
class DataYaml:
    """What a ``data.yaml`` says.

    Attributes:
        train (list of Path): the training images.
        val (list of Path or None): the validation images; None when the file has no
            ``val``.
        label_names (tuple of str): ``names`` in class order.
    """

    train: list
    val: list | None
    label_names: tuple


def _refuse(yaml_path, message):
    raise errors.AnnotationError(f'{yaml_path}: {message}')


def _label_names(config, yaml_path):
    """``names`` as a tuple: a list of names, or a dict {0: name, 1: name, ...}."""
    names = config.get('names')
    if isinstance(names, dict):
        # NOTE: some exports quote the keys ('0': name)
        names = {int(k) if isinstance(k, str) and k.isdigit() else k: v
                 for k, v in names.items()}
        if set(names) != set(range(len(names))):
            _refuse(yaml_path, f"'names': a mapping must have the keys 0 to {len(names) - 1}, "
                               f'got {sorted(names, key=str)}')
        names = [names[k] for k in range(len(names))]
    if not (isinstance(names, list) and names and all(
            isinstance(name, (str, int)) and str(name) for name in names)):
        _refuse(yaml_path, f"'names': expected a list of class names or a mapping "
                           f'{{0: name, ...}}, got {names!r}')
    count = config.get('nc', len(names))
    if count != len(names):
        _refuse(yaml_path, f"'nc' is {count!r} but 'names' holds {len(names)} names")
    return tuple(str(name) for name in names)


def _root(config, yaml_path):
    """The folder the split paths are relative to: ``path`` (relative to the yaml's
    folder when not absolute), or the yaml's folder."""
    base = pathlib.Path(yaml_path).parent
    if config.get('path') in (None, ''):
        return base
    if not isinstance(config['path'], str):
        _refuse(yaml_path, f"'path': expected a folder, got {config['path']!r}")
    return base / pathlib.Path(config['path']).expanduser()


def _split(config, key, root, yaml_path):
    """The images of split ``key`` (a folder, a .txt list, or a list of these)."""
    source = config[key]
    items = source if isinstance(source, list) else [source]
    if not items or not all(isinstance(item, str) and item for item in items):
        _refuse(yaml_path, f'{key!r}: expected a folder, a .txt list of images or a list of '
                           f'these, got {source!r}')
    resolved = []
    for item in items:
        path = root / item
        # NOTE: Roboflow writes '../train/images' meant from the dataset's folder;
        # Ultralytics tries it without the '../' when it does not exist
        if not path.exists() and item.startswith('../'):
            path = root / item[3:]
        if not path.exists():
            raise errors.MissingFileError(f'{yaml_path}: {key!r}: {item!r} is neither a folder '
                                          f'nor a list of images (looked for {path})')
        resolved.append(path)
    return yolo_dataset.image_paths(resolved)


def read_data_yaml(yaml_path):
    """Read a ``data.yaml``: ``path`` (optional), ``train``, ``val`` (optional), ``names``.

    Args:
        yaml_path (str or Path): the file.

    Returns:
        DataYaml: the images of each split and the class names.

    Raises:
        cvzoo.errors.CorruptFileError: the file is not YAML.
        cvzoo.errors.AnnotationError: it is not a mapping, or ``names`` or ``train`` is
            missing or malformed; the message names the file and the key.
        cvzoo.errors.MissingFileError: a split's folder or list does not exist.
    """
    import yaml

    yaml_path = pathlib.Path(yaml_path)
    try:
        config = yaml.safe_load(yaml_path.read_text(encoding='utf-8'))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise errors.CorruptFileError(f'{yaml_path}: not valid YAML ({error})') from None
    if not isinstance(config, dict):
        _refuse(yaml_path, f'expected a mapping with train, val and names, got {config!r}')
    for key in ('train', 'names'):
        if key not in config:
            _refuse(yaml_path, f'{key!r} is missing (expected path, train, val and names)')
    label_names = _label_names(config, yaml_path)
    root = _root(config, yaml_path)
    val = _split(config, 'val', root, yaml_path) if config.get('val') else None
    return DataYaml(_split(config, 'train', root, yaml_path), val, label_names)
