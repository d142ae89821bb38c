"""The YOLO text layout of Ultralytics', Roboflow's and CVAT's exports: a ``data.yaml``,
images, and a ``.txt`` of normalised boxes per image."""

import math
import os
import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.image_folder.directory_parsing_label_dataset import IMAGE_EXTENSIONS
from cvzoo.utils import image


def label_path(img_path):
    """The label file of an image, as Ultralytics finds it: the last ``images`` folder of
    the path replaced by ``labels``, the extension by ``.txt``.

    >>> label_path('data/images/train/a.jpg').as_posix()
    'data/labels/train/a.txt'
    """
    parts = list(pathlib.Path(img_path).with_suffix('.txt').parts)
    for k in range(len(parts) - 2, -1, -1):
        if parts[k] == 'images':
            parts[k] = 'labels'
            break
    return pathlib.Path(*parts)


def _fields(text, txt_path, number):
    """The numbers of one label line."""
    try:
        return [float(field) for field in text.split()]
    except ValueError:
        raise errors.AnnotationError(f'{txt_path}: line {number}: expected numbers '
                                     f'"class cx cy w h", got {text.strip()!r}') from None


def _box_of_line(values, txt_path, number, n_class):
    """(label, [cx, cy, w, h]) of a line's numbers; a polygon line (class x1 y1 x2 y2 ...,
    YOLO's segmentation labels) gives its bounding box, as Ultralytics does."""
    if not (len(values) == 5 or (len(values) >= 7 and len(values) % 2 == 1)):
        raise errors.AnnotationError(
            f'{txt_path}: line {number}: expected 5 fields "class cx cy w h" (or a polygon '
            f'"class x1 y1 x2 y2 x3 y3 ..."), got {len(values)}')
    label = values[0]
    if not (label.is_integer() and 0 <= label < n_class):
        raise errors.AnnotationError(
            f'{txt_path}: line {number}: class {values[0]:g} is not one of the {n_class} '
            f'names (0 to {n_class - 1})')
    coordinates = values[1:]
    if not all(math.isfinite(v) and 0 <= v <= 1 for v in coordinates):
        raise errors.AnnotationError(
            f'{txt_path}: line {number}: coordinates must be finite and normalised to '
            f'[0, 1], got {coordinates}')
    if len(coordinates) == 4:
        return int(label), coordinates
    xy = numpy.array(coordinates).reshape(-1, 2)
    low, high = xy.min(axis=0), xy.max(axis=0)
    return int(label), [*(low + high) / 2, *(high - low)]


def read_yolo_labels(txt_path, n_class):
    """Read one YOLO label file.

    Args:
        txt_path: the file; one line ``class cx cy w h`` per box, the centre and size
            normalised by the image's width and height. Blank lines are skipped.
        n_class (int): the number of names; a class must be below it.

    Returns:
        tuple: label (R,) int32 and box (R, 4) float32 (cx, cy, w, h) normalised.

    Raises:
        cvzoo.errors.AnnotationError: a line with the wrong number of fields, a class
            that is not a whole number in [0, n_class), or a coordinate that is not a
            finite number in [0, 1]; the message names the file and the line.
    """
    labels, boxes = [], []
    with open(txt_path, encoding='utf-8', errors='replace') as file:
        for number, text in enumerate(file, 1):
            if not text.strip():
                continue
            values = _fields(text, txt_path, number)
            label, box = _box_of_line(values, txt_path, number, n_class)
            labels.append(label)
            boxes.append(box)
    return (numpy.array(labels, numpy.int32),
            numpy.array(boxes, numpy.float32).reshape(-1, 4))


def image_paths(source, root=None):
    """The images a ``data.yaml`` split names, sorted.

    Args:
        source (str, Path or list): a folder of images (searched recursively), a
            ``.txt`` file of image paths (one a line, relative to the file's folder), or
            a list of these.
        root (Path or None): the folder relative paths start from (None: as given).

    Raises:
        cvzoo.errors.MissingFileError: a folder or list file that does not exist.
    """
    if isinstance(source, (list, tuple)):
        return sorted(p for item in source for p in image_paths(item, root))
    path = pathlib.Path(os.path.expanduser(str(source)))
    if root is not None and not path.is_absolute():
        path = root / path
    if path.is_dir():
        return sorted(p for p in path.rglob('*') if p.suffix.lower() in IMAGE_EXTENSIONS)
    if path.is_file() and path.suffix == '.txt':
        lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        return [path.parent / line if not pathlib.Path(line).is_absolute()
                else pathlib.Path(line) for line in lines]
    raise errors.MissingFileError(f'{path}: expected a folder of images or a .txt list of '
                                  f'images; it does not exist')


class YOLOBboxDataset(dataset_mixin.DatasetMixin):
    """Detection from images and their YOLO label files.

    Args:
        img_paths (sequence of path): the images; the label of ``.../images/.../a.jpg`` is
            ``.../labels/.../a.txt`` (:func:`label_path`). An image without a label file
            has no boxes (R = 0), as in Ultralytics.
        label_names (sequence of str): the class names, label i is name i.

    Every label file is read and checked when the dataset is made. Example i is
    ``img, bbox, label``:

        img    (3, H, W) float32  RGB in [0, 255]
        bbox   (R, 4) float32     (x_min, y_min, x_max, y_max) in pixels, from the
                                  normalised centre and size and the image's size,
                                  clipped to the image
        label  (R,) int32         index into ``label_names``

    Raises:
        cvzoo.errors.AnnotationError: a bad label line (see :func:`read_yolo_labels`).
    """

    def __init__(self, img_paths, label_names):
        self.img_paths = [pathlib.Path(p) for p in img_paths]
        self.label_names = tuple(label_names)
        self.label_paths = [label_path(p) for p in self.img_paths]
        self._labels = [read_yolo_labels(p, len(self.label_names)) if p.is_file()
                        else (numpy.zeros(0, numpy.int32), numpy.zeros((0, 4), numpy.float32))
                        for p in self.label_paths]

    def __len__(self):
        return len(self.img_paths)

    def get_example(self, i):
        img = image.read_image(self.img_paths[i])
        label, box = self._labels[i]
        H, W = img.shape[1:]
        centre, half = box[:, :2], box[:, 2:] / 2
        bbox = numpy.concatenate([centre - half, centre + half], axis=1) * [W, H, W, H]
        bbox[:, 0::2] = numpy.clip(bbox[:, 0::2], 0, W)
        bbox[:, 1::2] = numpy.clip(bbox[:, 1::2], 0, H)
        return img, bbox.astype(numpy.float32), label.copy()
