"""COCO-format jsons: boxes ('coco'), masks ('coco_instances') or keypoints
('coco_keypoints'), as a json file or a folder of them.

A folder is one of: ``annotations/instances_<split>.json`` (or ``person_keypoints_``)
with the images in ``<split>/`` (COCO's own layout); ``train/`` and ``valid/`` each
holding one json and its images (Roboflow's export); or one json with its images.
A json whose name holds 'train' is the training split, one holding 'val' or 'test' the
validation split.
"""

import pathlib

from cvzoo import errors
from cvzoo.datasets.coco import coco_annotations
from cvzoo.datasets.coco.coco_bbox_dataset import COCOBboxDataset
from cvzoo.datasets.coco.coco_instance_segmentation_dataset import (
    COCOInstanceSegmentationDataset,
)
from cvzoo.datasets.coco.coco_keypoint_dataset import COCOKeypointDataset
from cvzoo.datasets.formats.splits import VAL_NAMES, Splits
from cvzoo.datasets.registry import coco_image_dir

PREFIXES = ('instances', 'person_keypoints')
DATASET_CLASSES = {'coco': COCOBboxDataset, 'coco_instances': COCOInstanceSegmentationDataset,
                   'coco_keypoints': COCOKeypointDataset}
# the task each COCO format trains, and what its annotations must hold for it
_NEEDS = (('keypoint_detection', 'coco_keypoints', 'keypoints'),
          ('instance_segmentation', 'coco_instances', 'masks'),
          ('detection', 'coco', 'boxes'))


def contents(json_path):
    """What the json's annotations hold: a set of 'boxes', 'masks' (a non-empty
    segmentation: polygons or RLE) and 'keypoints'; None when it is not a COCO json."""
    data = coco_annotations.load_json(json_path)
    if not (isinstance(data, dict) and isinstance(data.get('annotations'), list)
            and 'images' in data):
        return None
    found = {'boxes'}
    for entry in data['annotations']:
        if not isinstance(entry, dict):
            continue
        if entry.get('segmentation'):
            found.add('masks')
        if entry.get('keypoints'):
            found.add('keypoints')
    return found


def format_for(found, task, where):
    """The COCO format that trains ``task`` (None: the richest the json allows).

    Raises:
        cvzoo.errors.UsageError: the json lacks what ``task`` needs, naming ``where``.
    """
    for needed_task, name, needed in _NEEDS:
        if task in (None, needed_task) and needed in found:
            return name
    needed = {needed_task: needed for needed_task, _, needed in _NEEDS}
    if task in needed:
        raise errors.UsageError(f'data: {where} is COCO data whose annotations hold no '
                                f'{needed[task]} to train {task!r}')
    raise errors.UsageError(f'data: {where} is COCO data, which cannot train {task!r}')


def _split_of(name):
    """'train', 'val' or None from a file or folder name."""
    name = name.lower()
    if 'train' in name:
        return 'train'
    if any(word in name for word in VAL_NAMES):
        return 'val'
    return None


def _assign(jsons, where):
    """{'train': json, 'val': json} of the candidate jsons (one json alone is train)."""
    if len(jsons) == 1:
        return {'train': jsons[0]}
    splits = {}
    for path in jsons:
        split = _split_of(path.stem if path.parent.name == 'annotations'
                          else path.parent.name + path.stem)
        if split is None or split in splits:
            raise errors.UsageError(
                f'data: {where} holds several COCO jsons {[str(p) for p in jsons]}; expected '
                f"one whose name holds 'train' and at most one holding 'val' or 'test'")
        splits[split] = path
    if 'train' not in splits:
        raise errors.UsageError(f"data: {where}: none of the COCO jsons {[str(p) for p in jsons]}"
                                f" has 'train' in its name")
    return splits


def jsons_in(root, task=None):
    """{'train': json, 'val': json (optional)} of a folder, {} when it holds none."""
    root = pathlib.Path(root)
    if root.is_file():
        return {'train': root}
    by_prefix = {prefix: sorted((root / 'annotations').glob(f'{prefix}_*.json'))
                 for prefix in PREFIXES}
    prefixes = [p for p in PREFIXES if by_prefix[p]]
    if task == 'keypoint_detection' and by_prefix['person_keypoints']:
        prefixes = ['person_keypoints']
    if prefixes:
        return _assign(by_prefix[prefixes[0]], root)
    # NOTE: outside annotations/, only jsons that are COCO count (not a tool's notes)
    in_splits = [jsons[0] for jsons in ([p for p in sorted((root / name).glob('*.json'))
                                         if contents(p) is not None]
                                        for name in ('train',) + VAL_NAMES) if len(jsons) == 1]
    if in_splits:
        return _assign(in_splits, root)
    beside = [p for p in sorted(root.glob('*.json')) if contents(p) is not None]
    return _assign(beside, root) if beside else {}


def matches(path):
    """What makes ``path`` COCO data (for messages), or None."""
    path = pathlib.Path(path)
    if path.is_file():
        return 'a COCO json' if path.suffix == '.json' else None
    if not path.is_dir():
        return None
    try:
        jsons = jsons_in(path)
    except errors.UsageError:
        return 'COCO jsons'
    return f'the COCO json {jsons["train"]}' if jsons else None


def _dataset(json_path, format):
    prefix = next((p for p in PREFIXES if json_path.stem.startswith(p + '_')), 'instances')
    return DATASET_CLASSES[format].from_json(json_path, coco_image_dir(json_path, prefix))


def read(path, format, task=None):
    """Splits of a COCO json or folder, read as ``format``."""
    jsons = jsons_in(path, task)
    train = _dataset(jsons['train'], format)
    val = _dataset(jsons['val'], format) if 'val' in jsons else None
    return Splits(train, val, tuple(train.label_names), getattr(train, 'point_names', None))
