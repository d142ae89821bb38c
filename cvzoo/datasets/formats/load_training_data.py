"""The user's data on disk as training and validation sets (``cvzoo train --data``)."""

import dataclasses
import math
import pathlib

from cvzoo import errors
from cvzoo.datasets.coco.coco_annotations import parse_once
from cvzoo.datasets.formats import (
    class_folders,
    coco_files,
    format_detection,
    segmentation_folders,
    voc_folder,
    yolo_files,
)
from cvzoo.datasets.registry import map_labels_by_name
from cvzoo.datasets.sub_dataset import split_dataset_random

# task -> the position of the label in its examples (None: a label map, not remapped)
_LABEL_INDEX = {'classification': 1, 'detection': 2, 'semantic_segmentation': None,
                'instance_segmentation': 2, 'keypoint_detection': 3}


@dataclasses.dataclass
class TrainingData:
    """Training and validation sets in the task's target layout (DESIGN.md).

    Attributes:
        train: the training examples.
        val: the validation examples, or None (no validation).
        label_names (tuple of str): class names, label i is name i.
        task (str): one of format_detection.TASKS.
        format (str): one of FORMATS.
        point_names (tuple of str or None): the keypoints' names (keypoint_detection).
    """

    train: object
    val: object
    label_names: tuple
    task: str
    format: str
    point_names: tuple | None = None


def _read(path, format, task, training=True):
    """The :class:`Splits` of ``path`` read as ``format`` (for training, or validation)."""
    if format == 'class_folders':
        return class_folders.read(path, training)
    if format == 'voc':
        return voc_folder.read(path)
    if format == 'yolo':
        return yolo_files.read(path)
    if format == 'segmentation_folders':
        return segmentation_folders.read(path)
    return coco_files.read(path, format, task)


def _on_train_labels(dataset, names, label_names, task, where):
    """``dataset`` (classes ``names``) with its labels mapped onto ``label_names``."""
    if tuple(names) == tuple(label_names):
        return dataset
    unknown = [name for name in names if name not in label_names]
    if unknown or _LABEL_INDEX[task] is None:
        raise errors.UsageError(
            f'val: {where} has the classes {list(names)}; expected those of the training '
            f'data {list(label_names)}' + (f' (unknown: {unknown})' if unknown else ''))
    return map_labels_by_name(dataset, label_names, where, _LABEL_INDEX[task])[0]


def _check_fraction(val_fraction):
    if not (isinstance(val_fraction, (int, float)) and math.isfinite(val_fraction)
            and 0 <= val_fraction < 1):
        raise errors.UsageError(f'val_fraction: expected a number in [0, 1), got '
                                f'{val_fraction!r}')


def _held_out(dataset, val_fraction, seed, path):
    """(train, val) with ``val_fraction`` of ``dataset`` held out at random (``seed``)."""
    if val_fraction == 0:
        return dataset, None
    n = len(dataset)
    n_val = max(1, round(n * val_fraction))
    if n - n_val < 1:
        raise errors.UsageError(f'data: {path} holds {n} examples, too few to hold '
                                f'{val_fraction:g} of them out for validation (give --val '
                                f'or a val_fraction of 0)')
    return split_dataset_random(dataset, n - n_val, seed=seed)


def _check_format(format):
    if format != 'auto' and format not in format_detection.FORMATS:
        raise errors.UsageError(f"format: expected 'auto' or one of {format_detection.FORMATS}, "
                                f'got {format!r}')


def _validation(val, format, detect, task, label_names):
    """The validation set at ``val``: its own validation split, else all of it."""
    if not pathlib.Path(val).exists():
        raise errors.MissingFileError(f'val: {val} does not exist')
    val_format = format_detection.detect_format(val, task) if detect else format
    if val_format != format:
        raise errors.UsageError(f'val: {val} holds {val_format} data; expected {format} '
                                f'as the training data')
    splits = _read(val, format, task, training=False)
    dataset = splits.val if splits.val is not None else splits.train
    return _on_train_labels(dataset, splits.label_names, label_names, task, val)


@parse_once()  # a COCO json is parsed once, to tell its format and to read it
def load_training_data(path, task=None, format='auto', val=None, val_fraction=0.2, seed=0):
    """Read the data at ``path`` for training.

    Args:
        path (str or Path): a folder, a COCO json or a YOLO data.yaml (see
            :func:`detect_format`).
        task (str or None): the task to train; None: the format's.
        format (str): 'auto' (:func:`detect_format`) or one of FORMATS.
        val (str, Path or None): validation data in the same format (its own validation
            split if it has one, else all of it); classes are matched to the training
            data's by name. None: the format's own validation split (VOC's val.txt or
            test.txt, YOLO's ``val:``, COCO's ``*_val*.json``, ``val/`` or ``valid/``
            folders), else ``val_fraction`` held out.
        val_fraction (float): in [0, 1): the part of the data held out, at random with
            ``seed``, when there is no validation split; 0: no validation.
        seed (int): of the held-out split.

    Returns:
        TrainingData: examples in the task's target layout (``img, label``;
        ``img, bbox, label``; ``img, label`` maps with -1 ignored; ``img, mask, label``;
        ``img, point, visible, label, bbox``).

    Raises:
        cvzoo.errors.UsageError: an unknown format or task, a format that cannot train
            the task, ``val`` of another format, no training examples.
        cvzoo.errors.MissingFileError, cvzoo.errors.CorruptFileError,
        cvzoo.errors.AnnotationError: from the readers, naming the file.
    """
    _check_format(format)
    format_detection.check_task(task)
    _check_fraction(val_fraction)
    detect = format == 'auto'
    if detect:
        format = format_detection.detect_format(path, task)
    elif not pathlib.Path(path).exists():
        raise errors.MissingFileError(f'data: {path} does not exist')
    task = format_detection.task_of(format, task, path)
    splits = _read(path, format, task)
    if len(splits.train) == 0:
        raise errors.UsageError(f'data: {path} holds no training examples ({format})')
    train, val_dataset = splits.train, splits.val
    if val is not None:
        val_dataset = _validation(val, format, detect, task, splits.label_names)
    elif val_dataset is not None:
        val_dataset = _on_train_labels(val_dataset, val_dataset.label_names, splits.label_names,
                                       task, path)
    else:
        train, val_dataset = _held_out(train, val_fraction, seed, path)
    return TrainingData(train, val_dataset, tuple(splits.label_names), task, format,
                        splits.point_names)
