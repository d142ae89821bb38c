"""Tell the format of a user's data on disk (``cvzoo train --format auto``)."""

import pathlib

from cvzoo import errors
from cvzoo.datasets.coco.coco_annotations import parse_once
from cvzoo.datasets.formats import (
    class_folders,
    coco_files,
    segmentation_folders,
    voc_folder,
    yolo_files,
)

# format -> the task its examples are laid out for (DESIGN.md's target layouts)
FORMAT_TASKS = {
    'class_folders': 'classification',
    'voc': 'detection',
    'coco': 'detection',
    'yolo': 'detection',
    'segmentation_folders': 'semantic_segmentation',
    'coco_instances': 'instance_segmentation',
    'coco_keypoints': 'keypoint_detection',
}
FORMATS = tuple(FORMAT_TASKS)
TASKS = ('classification', 'detection', 'semantic_segmentation', 'instance_segmentation',
         'keypoint_detection')
LOOKED_FOR = ('a folder per class of images (class_folders); a VOC folder with '
              'Annotations/, JPEGImages/ and ImageSets/Main/, or VOC xml files beside their '
              'images, or in train/ and valid/ (voc); a COCO json, or a folder '
              'with annotations/instances_*.json or person_keypoints_*.json and the images '
              '(coco, coco_instances, coco_keypoints); a data.yaml, or a folder holding one, '
              'with images/ and labels/ of .txt files (yolo); images/, labels/ of PNG label '
              'maps and classes.txt (segmentation_folders)')
# the layouts that can be told apart; a folder per class is what is left
_LAYOUTS = (('voc', voc_folder), ('coco', coco_files), ('yolo', yolo_files),
            ('segmentation_folders', segmentation_folders))


def check_task(task):
    """Refuse a task that is not one of TASKS (None passes)."""
    if task is not None and task not in TASKS:
        raise errors.UsageError(f'task: expected one of {TASKS} or None, got {task!r}')


def task_of(format, task, path):
    """The task ``format`` trains: ``task`` when given and possible.

    Raises:
        cvzoo.errors.UsageError: the format's data cannot train ``task``.
    """
    if task is None or FORMAT_TASKS[format] == task:
        return FORMAT_TASKS[format]
    raise errors.UsageError(f'data: {path} holds {FORMAT_TASKS[format]} data ({format}), '
                            f'which cannot train {task!r}')


def _coco_format(path, task):
    jsons = coco_files.jsons_in(path, task)
    found = coco_files.contents(jsons['train'])
    if found is None:
        raise errors.UsageError(f'data: {jsons["train"]} is not a COCO json (expected images, '
                                f'annotations and categories)')
    return coco_files.format_for(found, task, jsons['train'])


@parse_once()  # load_training_data then reads the COCO json parsed here
def detect_format(path, task=None):
    """The format of the data at ``path``: one of FORMATS.

    Args:
        path (str or Path): a folder, a COCO json or a YOLO data.yaml.
        task (str or None): the task to train (one of TASKS). It decides what a COCO
            json is read as: one with boxes and masks is 'coco_instances' for
            'instance_segmentation' (and for None), 'coco' for 'detection'; a keypoints
            json is 'coco_keypoints' unless another task is asked.

    Returns:
        str: 'class_folders', 'voc', 'coco', 'yolo', 'segmentation_folders',
        'coco_instances' or 'coco_keypoints'.

    Raises:
        cvzoo.errors.MissingFileError: ``path`` does not exist.
        cvzoo.errors.UsageError: the layout is none of these (the message lists what was
            looked for), more than one (it names each), or cannot train ``task``.
    """
    check_task(task)
    path = pathlib.Path(path)
    if not path.exists():
        raise errors.MissingFileError(f'data: {path} does not exist')
    found = {name: what for name, module in _LAYOUTS
             if (what := module.matches(path)) is not None}
    if len(found) > 1:
        seen = '; '.join(f'{name} ({what})' for name, what in found.items())
        raise errors.UsageError(f'data: the layout of {path} is ambiguous: it looks like '
                                f'{seen}; name the format (--format) or give the folder of '
                                f'one of them')
    if not found and class_folders.matches(path):
        found = {'class_folders': class_folders.matches(path)}
    if not found:
        raise errors.UsageError(f'data: cannot tell the format of {path}; looked for '
                                f'{LOOKED_FOR}')
    (format,) = found
    if format == 'coco':
        return _coco_format(path, task)
    task_of(format, task, path)
    return format
