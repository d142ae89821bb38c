"""Read a COCO instances json into per-image records (shared by the COCO datasets).

Every field the datasets use is checked once, when the json is read, a column at a time
(COCO's train json holds 860k annotations, so the checks are type sets and NumPy
comparisons; the entry is looked up only once a column fails). A field of the wrong type
or value is an AnnotationError naming the file and the entry, e.g.
``instances.json: annotations[17] (id 42): 'image_id' must be an int, got list [3]``.
Segmentations and keypoints are checked by the datasets that decode them.

Inside :func:`parse_once`, a json is parsed once however often it is read: telling a
user's data's format and then reading it share the parse.
"""

import collections
import contextlib
import contextvars
import itertools
import json
import os
import pathlib
import reprlib
import sys

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


# NOTE: the largest float; a json int above it (json allows 4300 digits) cannot be one.
_FLOAT_MAX = sys.float_info.max
_MISSING = object()  # the value of a field that an entry lacks


def describe(value):
    """A short account of a json value for error messages: its type and a clipped repr."""
    if value is _MISSING:
        return 'nothing (the field is missing)'
    if value is None:
        return 'null'
    return f'{type(value).__name__} {reprlib.repr(value)}'


def is_number(value):
    """True for a finite json number (an int or a float; true and false are not numbers)."""
    if type(value) is int:
        return -_FLOAT_MAX <= value <= _FLOAT_MAX
    return type(value) is float and -_FLOAT_MAX <= value <= _FLOAT_MAX  # False for NaN


def entry_name(kind, position, entry):
    """Where an entry sits in the json, for error messages: ``annotations[17] (id 42)``."""
    if isinstance(entry, dict) and 'id' in entry:
        return f'{kind}[{position}] (id {reprlib.repr(entry["id"])})'
    return f'{kind}[{position}]'


def _refuse(json_path, where, message):
    raise errors.AnnotationError(f'{json_path}: {where}: {message}')


# {(real path, mtime in ns, size): parsed document} inside parse_once(), else None
_PARSED = contextvars.ContextVar('cvzoo_coco_parsed', default=None)


@contextlib.contextmanager
def parse_once():
    """Within the block, :func:`load_json` parses each file once and hands every later
    read of it the same document (callers must not change it). A file is known by its
    real path, modification time and size, so one rewritten meanwhile is parsed again;
    the documents are let go when the outermost block ends.

    >>> with parse_once():
    ...     pass
    """
    if _PARSED.get() is not None:  # nested: the outer block's documents serve
        yield
        return
    token = _PARSED.set({})
    try:
        yield
    finally:
        _PARSED.reset(token)


def _file_key(json_path):
    """(real path, mtime in ns, size) of the file, or None when it cannot be stat'ed."""
    try:
        stat = os.stat(json_path)
    except OSError:
        return None  # the parse reports it
    return os.path.realpath(json_path), stat.st_mtime_ns, stat.st_size


def load_json(json_path):
    """The json's data; bytes in, so that a UTF-8 BOM or UTF-16 file reads as well.

    Inside :func:`parse_once`, the document parsed before for the same file.
    """
    parsed = _PARSED.get()
    key = None if parsed is None else _file_key(json_path)
    if key is None:
        return _parse(json_path)
    if key not in parsed:
        parsed[key] = _parse(json_path)
    return parsed[key]


def _parse(json_path):
    try:
        with open(json_path, 'rb') as file:
            return json.load(file)
    except RecursionError:
        # NOTE: Python's json parser recurses per level; a COCO json needs five.
        raise errors.AnnotationError(f'{json_path}: not a COCO json: its arrays and objects '
                                     f'are nested deeper than Python can parse') from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, a 5000-digit int
        raise errors.CorruptFileError(f'{json_path}: not valid json ({error})') from None


class _Entries:
    """One top-level list of the json (images, categories or annotations) and its checks."""

    def __init__(self, json_path, data, kind):
        """Take ``data[kind]``, which must be a list of objects."""
        self.json_path, self.kind = json_path, kind
        if kind not in data:
            _refuse(json_path, 'top level', f'{kind!r}: missing')
        self.entries = data[kind]
        if type(self.entries) is not list:
            _refuse(json_path, 'top level', f'{kind!r}: expected a list, got '
                                            f'{describe(self.entries)}')
        self.refuse_unless(set(map(type, self.entries)) <= {dict}, self.entries,
                           lambda entry: type(entry) is dict, None, 'an object')

    def values(self, field, default=_MISSING):
        """The field of every entry, ``default`` where it is missing."""
        return [entry.get(field, default) for entry in self.entries]

    def refuse(self, position, message):
        """Raise an AnnotationError naming the file and entry ``position``."""
        _refuse(self.json_path, entry_name(self.kind, position, self.entries[position]),
                message)

    def refuse_unless(self, ok, values, is_good, field, expected):
        """Unless ``ok`` (the verdict on the whole column), raise for the first value that
        fails ``is_good``."""
        if ok:
            return
        position = next(k for k, value in enumerate(values) if not is_good(value))
        named = 'the entry' if field is None else repr(field)
        if values[position] is _MISSING:
            self.refuse(position, f'{named} is missing')
        self.refuse(position, f'{named} must be {expected}, got {describe(values[position])}')

    def ints(self, field):
        """The field, which every entry must hold as an int."""
        values = self.values(field)
        self.refuse_unless(set(map(type, values)) <= {int}, values,
                           lambda value: type(value) is int, field, 'an int')
        return values

    def unique_ids(self, what):
        """The entries' ids (ints, each used once)."""
        ids = self.ints('id')
        if len(set(ids)) != len(ids):
            repeated = sorted(i for i, count in collections.Counter(ids).items() if count > 1)
            self.refuse(ids.index(repeated[0]), f"ids {repeated[:5]} are each used by more "
                                                f"than one {what}")
        return ids

    def lookup(self, values, known):
        """(N,) int64: ``known[value]`` (a dict of ints) of each value, -1 where absent."""
        found = [known.get(value, -1) for value in values]
        return numpy.array(found, numpy.int64).reshape(-1)


def _is_text(value):
    return type(value) is str and value != '' and '\0' not in value


def _is_side(value):
    return value is None or (type(value) is int and 0 < value <= _FLOAT_MAX)


def _is_crowd_flag(value):
    return type(value) in (int, bool) and value in (0, 1)


def _is_area(value):
    return is_number(value) and value >= 0


def _is_box(box):
    return (type(box) is list and len(box) == 4 and all(map(is_number, box))
            and box[2] >= 0 and box[3] >= 0)


def _finite_array(values):
    """``values`` as float64, or None when a number does not fit (a 400-digit int)."""
    try:
        return numpy.array(values, numpy.float64)
    except OverflowError:
        return None


def _boxes(entries):
    """(N, 4) float64 [x, y, w, h] of the annotations' 'bbox' fields, checked."""
    values = entries.values('bbox')
    array = None
    if set(map(type, values)) <= {list} and set(map(len, values)) <= {4} and set(
            map(type, itertools.chain.from_iterable(values))) <= {int, float}:
        array = _finite_array(values)
    if array is not None:
        array = array.reshape(-1, 4)
    ok = array is not None and bool(numpy.isfinite(array).all()) and bool(
        (array[:, 2:] >= 0).all())
    entries.refuse_unless(ok, values, _is_box, 'bbox',
                          '[x, y, w, h], four finite numbers with w, h >= 0')
    return array


def _numbers(entries, field, default, is_good, expected):
    """(N,) float64 of an optional number field, checked with ``is_good``."""
    values = entries.values(field, default)
    array = None
    if set(map(type, values)) <= {int, float}:
        array = _finite_array(values)
    ok = array is not None and bool((numpy.isfinite(array) & (array >= 0)).all())
    entries.refuse_unless(ok, values, is_good, field, expected)
    return array


def _check_images(entries):
    """The images' ids, and their widths and heights (NaN where the json has none)."""
    ids = entries.unique_ids('image')
    names = entries.values('file_name')
    entries.refuse_unless(set(map(type, names)) <= {str} and all(names) and not any(
        '\0' in name for name in names), names, _is_text, 'file_name',
        'a file name (a non-empty string)')
    sides = []
    for field in ('width', 'height'):
        values = entries.values(field, None)
        given = [value for value in values if value is not None]
        entries.refuse_unless(set(map(type, given)) <= {int} and min(given, default=1) > 0
                              and max(given, default=1) <= _FLOAT_MAX, values, _is_side,
                              field, 'a positive int')
        sides.append(numpy.array([numpy.nan if v is None else v for v in values], float))
    return ids, sides


def _check_categories(entries):
    """The categories' ids; each has a name."""
    ids = entries.unique_ids('category')
    names = entries.values('name')
    entries.refuse_unless(all(map(_is_text, names)), names, _is_text, 'name',
                          'a non-empty string')
    return ids


class COCOAnnotations:
    """The images (sorted by id), their annotations and the category -> label mapping.

    Args:
        json_path: a COCO-format json (images, annotations, categories).
        standard_labels (bool): True: labels follow coco_bbox_label_names (for the
            official files); False: the json's categories sorted by id.

    Attributes:
        images (list of dict): the json's images, sorted by id.
        entries (list of dict): the json's annotations, in its order; a "position" is
            an index into it.
        categories (list of dict): the json's categories, sorted by id.

    Raises:
        cvzoo.errors.CorruptFileError: the file is not json.
        cvzoo.errors.AnnotationError: a field of an image, category or annotation has
            the wrong type or value, or an id points nowhere; the message names the file
            and the entry.
    """

    def __init__(self, json_path, standard_labels=False):
        self.json_path = pathlib.Path(json_path)
        data = load_json(self.json_path)
        if type(data) is not dict:
            _refuse(self.json_path, 'top level', f'expected an object with images, '
                                                 f'annotations and categories, got '
                                                 f'{describe(data)}')
        images, categories, annotations = (_Entries(self.json_path, data, kind) for kind in
                                           ('images', 'categories', 'annotations'))
        image_ids, (widths, heights) = _check_images(images)
        category_ids = _check_categories(categories)
        self.categories = sorted(categories.entries, key=lambda c: c['id'])
        if standard_labels:
            self.label_names = coco_label_names.coco_bbox_label_names
            self.category_ids = coco_label_names.coco_label_to_category_id
        else:
            self.label_names = tuple(c['name'] for c in self.categories)
            self.category_ids = tuple(sorted(category_ids))
        self.label_of = {cat_id: k for k, cat_id in enumerate(self.category_ids)}
        order = sorted(range(len(image_ids)), key=image_ids.__getitem__)
        self.images = [images.entries[k] for k in order]
        self.image_positions = order
        self._width, self._height = widths[order], heights[order]
        self.entries = annotations.entries
        self._read_annotations(annotations, {image_ids[k]: i for i, k in enumerate(order)})

    def _read_annotations(self, entries, index_of_image):
        image_ids, category_ids = entries.ints('image_id'), entries.ints('category_id')
        image = entries.lookup(image_ids, index_of_image)
        entries.refuse_unless(bool((image >= 0).all()), image_ids,
                              index_of_image.__contains__, 'image_id', 'the id of an image')
        label = entries.lookup(category_ids, self.label_of)
        entries.refuse_unless(bool((label >= 0).all()), category_ids,
                              self.label_of.__contains__, 'category_id',
                              'the id of a category')
        box = _boxes(entries)
        # NOTE: COCO's [x, y, w, h] is in continuous pixel coordinates (the top-left
        # corner and the size), so x_max = x + w with no - 1.
        corners = numpy.concatenate([box[:, :2], box[:, :2] + box[:, 2:]], axis=1)
        self._check_inside(entries, corners, image)
        crowd = entries.values('iscrowd', 0)
        entries.refuse_unless(set(map(type, crowd)) <= {int, bool} and set(crowd) <= {0, 1},
                              crowd, _is_crowd_flag, 'iscrowd', '0 or 1')
        self._area = _numbers(entries, 'area', 0, _is_area,
                              'a finite number >= 0').astype(numpy.float32)
        self._bbox = corners.astype(numpy.float32)
        self._label = label.astype(numpy.int32)
        self._crowd = numpy.array(crowd, bool).reshape(-1)
        self._order = numpy.argsort(image, kind='stable')
        self._starts = numpy.searchsorted(image[self._order], numpy.arange(len(self.images) + 1))

    def _check_inside(self, entries, corners, image):
        """Refuse a box wholly outside its image (clipping would make it zero-area)."""
        W, H = self._width[image], self._height[image]  # NaN (never outside) if unknown
        outside = numpy.flatnonzero((corners[:, 0] >= W) | (corners[:, 1] >= H)
                                    | (corners[:, 2] <= 0) | (corners[:, 3] <= 0))
        if len(outside):
            k = int(outside[0])
            entries.refuse(k, f"'bbox' {entries.entries[k]['bbox']} lies wholly outside the "
                              f'{W[k]:.0f}x{H[k]:.0f} image')

    def where(self, position):
        """``instances.json: annotations[17] (id 42)``: annotation ``position`` in messages."""
        return f'{self.json_path}: {entry_name("annotations", position, self.entries[position])}'

    def image_where(self, index):
        """``instances.json: images[3] (id 7)``: image ``index`` (by id) in messages."""
        return (f'{self.json_path}: '
                f'{entry_name("images", self.image_positions[index], self.images[index])}')

    def image_path(self, index, image_dir):
        """The path of image ``index`` inside ``image_dir``."""
        return pathlib.Path(image_dir) / self.images[index]['file_name']

    def image_size(self, index):
        """(H, W) of image ``index`` as the json gives it, or None."""
        H, W = self._height[index], self._width[index]
        return None if numpy.isnan(H) or numpy.isnan(W) else (int(H), int(W))

    def positions(self, index):
        """The positions of image ``index``'s annotations, in the json's order."""
        return self._order[self._starts[index]:self._starts[index + 1]]

    def instance_counts(self):
        """(number of images,) int: each image's annotations that are not crowd regions."""
        image = numpy.repeat(numpy.arange(len(self.images)), numpy.diff(self._starts))
        return numpy.bincount(image[~self._crowd[self._order]], minlength=len(self.images))

    def boxes(self, index, use_crowded):
        """bbox (R, 4) float32 clipped to the image, label, crowd, area and the positions
        of the annotations."""
        positions = self.positions(index)
        if not use_crowded:
            positions = positions[~self._crowd[positions]]
        bbox = self._bbox[positions]
        size = self.image_size(index)
        if size is not None:
            bbox[:, 0::2] = numpy.clip(bbox[:, 0::2], 0, size[1])
            bbox[:, 1::2] = numpy.clip(bbox[:, 1::2], 0, size[0])
        return (bbox, self._label[positions], self._crowd[positions], self._area[positions],
                positions)
