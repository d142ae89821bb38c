"""Read a COCO instances json into per-image records (shared by the COCO datasets)."""

import collections
import json
import math
import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import download_archive
from cvzoo.datasets.coco import coco_label_names
from cvzoo.utils import paths

COCO_IMAGE_URL = 'http://images.cocodataset.org/zips/{split}{year}.zip'
COCO_ANNOTATION_URL = 'http://images.cocodataset.org/annotations/annotations_trainval{year}.zip'
# NOTE: cocodataset.org publishes no checksums; None skips the check. A sha256 set here
# under the archive's file name is checked before anything is unpacked.
COCO_SHA256 = {}


def resolve_coco_paths(data_dir, split, year, annotation='instances'):
    """Return (json path, image folder) of the official layout, downloading for 'auto'.

    The layout is ``<data_dir>/annotations/<annotation>_<split><year>.json`` and
    ``<data_dir>/<split><year>/<file_name>``; 'auto' is ``<dataset_root>/coco``.
    ``annotation`` is 'instances' or 'person_keypoints' (both come in the same archive).
    """
    if split not in ('train', 'val'):
        raise ValueError(f"split: expected 'train' or 'val', got {split!r}")
    if str(year) not in ('2014', '2017'):
        raise ValueError(f"year: expected '2014' or '2017', got {year!r}")
    root = paths.dataset_root() / 'coco' if data_dir == 'auto' else pathlib.Path(data_dir)
    json_path = root / 'annotations' / f'{annotation}_{split}{year}.json'
    image_dir = root / f'{split}{year}'
    if json_path.is_file() and image_dir.is_dir():
        return json_path, image_dir
    if data_dir != 'auto':
        raise errors.MissingFileError(f'data_dir: expected {json_path} and the folder {image_dir}')
    for url, expected in ((COCO_ANNOTATION_URL.format(year=year), json_path),
                          (COCO_IMAGE_URL.format(split=split, year=year), image_dir)):
        sha256 = COCO_SHA256.get(url.rpartition('/')[2])
        download_archive.download_archive(url, root, expected, sha256=sha256,
                                          what=f'COCO {split}{year}')
    return json_path, image_dir


def _check(condition, json_path, where, field, what):
    if not condition:
        raise errors.AnnotationError(f'{json_path}: {where} field {field!r}: {what}')


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
        value)


def _check_entries(json_path, entries, kind, fields):
    """Each entry of a top-level list is an object with ``fields`` (an id is an int)."""
    _check(isinstance(entries, list), json_path, 'top level', kind + 's', 'expected a list')
    for position, entry in enumerate(entries):
        where = f'{kind} #{position}'
        _check(isinstance(entry, dict), json_path, where, kind, 'expected an object')
        where = f'{kind} {entry.get("id", "#" + str(position))}'
        for field in fields:
            _check(field in entry, json_path, where, field, 'missing')
        if 'id' in entry:
            _check(isinstance(entry['id'], int) and not isinstance(entry['id'], bool),
                   json_path, where, 'id', f'expected an integer, got {entry["id"]!r}')
    if kind != 'annotation':
        ids = collections.Counter(entry.get('id') for entry in entries)
        repeated = sorted(i for i, count in ids.items() if count > 1 and i is not None)
        if repeated:
            _check(False, json_path, f'{kind} {repeated[0]}', 'id',
                   f'ids {repeated[:5]} are each used by more than one {kind}')


class COCOAnnotations:
    """The images (sorted by id), their annotations and the category -> label mapping.

    Args:
        json_path: a COCO-format json (images, annotations, categories).
        standard_labels (bool): True: labels follow coco_bbox_label_names (for the
            official files); False: the json's categories sorted by id.
    """

    def __init__(self, json_path, standard_labels=False):
        self.json_path = pathlib.Path(json_path)
        try:
            with open(self.json_path) as f:
                data = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise errors.CorruptFileError(f'{self.json_path}: not valid json ({error})') from None
        _check(isinstance(data, dict), self.json_path, 'top level', 'images',
               'expected an object with images, annotations and categories')
        for key in ('images', 'annotations', 'categories'):
            _check(key in data, self.json_path, 'top level', key, 'missing')
        _check_entries(self.json_path, data['images'], 'image', ('id',))
        _check_entries(self.json_path, data['categories'], 'category', ('id', 'name'))
        _check_entries(self.json_path, data['annotations'], 'annotation', ('image_id',))
        categories = sorted(data['categories'], key=lambda c: c['id'])
        self.categories = categories  # the json's entries, sorted by id
        if standard_labels:
            self.label_names = coco_label_names.coco_bbox_label_names
            self.category_ids = coco_label_names.coco_label_to_category_id
        else:
            self.label_names = tuple(c['name'] for c in categories)
            self.category_ids = tuple(c['id'] for c in categories)
        self.label_of = {cat_id: k for k, cat_id in enumerate(self.category_ids)}
        self.images = sorted(data['images'], key=lambda img: img['id'])
        self.annotations = collections.defaultdict(list)
        image_ids = {record['id'] for record in self.images}
        for ann in data['annotations']:
            _check(ann['image_id'] in image_ids, self.json_path, f'annotation {ann.get("id")}',
                   'image_id', f'{ann["image_id"]!r} is not the id of an image')
            self.annotations[ann['image_id']].append(ann)

    def image_path(self, index, image_dir):
        """The path of image ``index`` inside ``image_dir``."""
        record = self.images[index]
        _check('file_name' in record, self.json_path, f'image {record.get("id")}',
               'file_name', 'missing')
        return pathlib.Path(image_dir) / record['file_name']

    def boxes(self, index, use_crowded):
        """bbox (R, 4) float32 clipped to the image, label, crowd, area and the annotations."""
        record = self.images[index]
        anns = self.annotations.get(record['id'], [])
        if not use_crowded:
            anns = [a for a in anns if not a.get('iscrowd', 0)]
        bbox = numpy.zeros((len(anns), 4), numpy.float32)
        label = numpy.zeros(len(anns), numpy.int32)
        for k, ann in enumerate(anns):
            where = f'annotation {ann.get("id")}'
            for field in ('bbox', 'category_id'):
                _check(field in ann, self.json_path, where, field, 'missing')
            box = ann['bbox']
            _check(isinstance(box, list) and len(box) == 4 and all(map(_is_number, box))
                   and box[2] >= 0 and box[3] >= 0, self.json_path, where,
                   'bbox', f'expected [x, y, w, h] of finite numbers with w, h >= 0, got '
                   f'{box!r}')
            _check(ann['category_id'] in self.label_of, self.json_path, where, 'category_id',
                   f'{ann["category_id"]} is not a category')
            # NOTE: COCO's [x, y, w, h] is in continuous pixel coordinates (the top-left
            # corner and the size), so x_max = x + w with no - 1.
            bbox[k] = (box[0], box[1], box[0] + box[2], box[1] + box[3])
            label[k] = self.label_of[ann['category_id']]
        if 'width' in record and 'height' in record:
            outside = numpy.flatnonzero((bbox[:, 0] >= record['width'])
                                        | (bbox[:, 1] >= record['height'])
                                        | (bbox[:, 2] <= 0) | (bbox[:, 3] <= 0))
            if len(outside):
                ann = anns[int(outside[0])]
                _check(False, self.json_path, f'annotation {ann.get("id")}', 'bbox',
                       f'{ann["bbox"]} lies wholly outside the {record["width"]}x'
                       f'{record["height"]} image')
            bbox[:, 0::2] = numpy.clip(bbox[:, 0::2], 0, record['width'])
            bbox[:, 1::2] = numpy.clip(bbox[:, 1::2], 0, record['height'])
        crowd = numpy.array([bool(a.get('iscrowd', 0)) for a in anns], bool)
        area = numpy.array([a.get('area', 0.0) for a in anns], numpy.float32)
        return bbox, label, crowd, area, anns
