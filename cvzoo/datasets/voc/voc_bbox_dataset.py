"""PASCAL VOC detection: images with boxes, labels and difficult flags from the xml files,
in VOC's own layout (:class:`VOCBboxDataset`) or listed xml and image by xml and image
(:class:`VOCFilesDataset`, for the flat folders LabelImg and Roboflow export)."""

import collections
import math
import pathlib
import typing
import warnings
import xml.etree.ElementTree as ElementTree

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.check_image_size import check_image_size
from cvzoo.datasets.voc import voc_label_names, voc_paths
from cvzoo.utils import image


def _field(element, path, where):
    """The text of ``element``'s field ``path``; ``where`` (the file, and the object) is
    named when it is missing or empty."""
    found = element.find(path)
    if found is None or found.text is None or not found.text.strip():
        raise errors.AnnotationError(f'{where}: missing or empty field <{path}>')
    return found.text.strip()


def _number(element, path, where):
    text = _field(element, path, where)
    try:
        return float(text)
    except ValueError:
        raise errors.AnnotationError(
            f'{where}: field <{path}> must be a number, got {text!r}') from None


def _size(root, xml_path):
    """(H, W) of the <size>, or None without one or with 0x0 (which LabelImg and some
    converters write when they did not know the size; the image as read then gives it)."""
    if root.find('size') is None:
        return None
    sides = []
    for path in ('size/height', 'size/width'):
        value = _number(root, path, xml_path)
        if not (value >= 0 and value.is_integer()):  # False for NaN and infinity
            raise errors.AnnotationError(f'{xml_path}: field <{path}> must be a whole number '
                                          f'of pixels, got {_field(root, path, xml_path)!r}')
        sides.append(int(value))
    if sides == [0, 0]:
        return None
    if 0 in sides:
        raise errors.AnnotationError(f'{xml_path}: <size> of {sides[1]}x{sides[0]} pixels: '
                                      f'both sides must be positive (or both 0, unknown)')
    return tuple(sides)


class VOCAnnotation(typing.NamedTuple):
    """One VOC annotation file as :func:`parse_voc_xml` reads it.

    Attributes:
        names (list of str): the objects' class names.
        bbox: (R, 4) float32 (x_min, y_min, x_max, y_max), continuous coordinates.
        difficult: (R,) bool.
        size (tuple or None): (H, W) ints, None when the file has no <size> (or 0x0).
        filename (str or None): the <filename> of the image, None when absent or empty.
    """

    names: list
    bbox: numpy.ndarray
    difficult: numpy.ndarray
    size: tuple | None
    filename: str | None


def parse_voc_xml(xml_path):
    """Read one VOC annotation file.

    Returns:
        VOCAnnotation: names, bbox, difficult, size and filename.

    Raises:
        cvzoo.errors.MissingFileError, cvzoo.errors.CorruptFileError: naming the file and
            the field (and the object: its index and name).
    """
    try:
        root = ElementTree.parse(xml_path).getroot()
    except FileNotFoundError:
        raise errors.MissingFileError(f'{xml_path}: annotation file not found') from None
    except ElementTree.ParseError as error:
        raise errors.CorruptFileError(f'{xml_path}: not valid xml ({error})') from None
    size = _size(root, xml_path)
    names, boxes, difficult = [], [], []
    for index, obj in enumerate(root.findall('object')):
        names.append(_field(obj, 'name', f'{xml_path}: object {index}'))
        where = f'{xml_path}: object {index} ({names[-1]!r})'
        flag = '0' if obj.find('difficult') is None else _field(obj, 'difficult', where)
        if flag not in ('0', '1'):
            raise errors.AnnotationError(f'{where} has <difficult> {flag!r}, expected 0 '
                                         f'or 1')
        difficult.append(flag == '1')
        if obj.find('bndbox') is None:
            raise errors.AnnotationError(f'{where} has no <bndbox>')
        box = [_number(obj, f'bndbox/{key}', where) for key in ('xmin', 'ymin', 'xmax', 'ymax')]
        if not all(math.isfinite(value) for value in box):
            raise errors.AnnotationError(
                f'{xml_path}: object {index} ({names[-1]!r}) has a <bndbox> that is not '
                f'finite: {box}')
        boxes.append(box)
    bbox = numpy.array(boxes, numpy.float32).reshape(-1, 4)
    # NOTE: VOC stores 1-based, inclusive pixel indices; pixel k covers [k - 1, k) in
    # continuous coordinates, so x_min = xmin - 1 and x_max = xmax. The box keeps the
    # devkit's width (xmax - xmin + 1). ChainerCV subtracts 1 from all four because its
    # boxes are inclusive and its metric adds 1 back; ours are not and ours does not.
    bbox[:, :2] -= 1
    bad = numpy.flatnonzero((bbox[:, 2] < bbox[:, 0]) | (bbox[:, 3] < bbox[:, 1]))
    if len(bad):
        raise errors.AnnotationError(f'{xml_path}: object {int(bad[0])} has <bndbox> with '
                                      f'xmax < xmin or ymax < ymin: {boxes[int(bad[0])]}')
    if size is not None:
        check_inside_image(xml_path, names, bbox, size)
    filename = (root.findtext('filename') or '').strip() or None
    return VOCAnnotation(names, bbox, numpy.array(difficult, bool), size, filename)


def check_inside_image(xml_path, names, bbox, size):
    """Refuse a box wholly outside the (H, W) image (clipping would make it zero-area).

    Raises:
        cvzoo.errors.AnnotationError: naming the file, the object's index and its name.
    """
    H, W = size
    outside = numpy.flatnonzero((bbox[:, 0] >= W) | (bbox[:, 1] >= H)
                                | (bbox[:, 2] <= 0) | (bbox[:, 3] <= 0))
    if len(outside):
        index = int(outside[0])
        raise errors.AnnotationError(
            f'{xml_path}: object {index} ({names[index]!r}) has a <bndbox> wholly outside '
            f'the {W}x{H} image: {(bbox[index] + [1, 1, 0, 0]).tolist()}')


def warn_rare_names(where, counts):
    """Warn about the class names that occur once in ``counts`` (name -> count), which
    were inferred from the xml files at ``where``: a misspelt name makes a class."""
    rare = sorted(name for name, count in counts.items() if count == 1)
    if rare:
        warnings.warn(f'{where}: class names inferred from the xml files; these '
                      f'occur only once (a typo makes a new class): {rare}', stacklevel=3)


def _names_in_folder(annotation_dir):
    """How often each class name occurs in the folder's xml files."""
    counts = collections.Counter()
    for xml_path in sorted(pathlib.Path(annotation_dir).glob('*.xml')):
        counts.update(parse_voc_xml(xml_path).names)
    return counts


class VOCFilesDataset(dataset_mixin.DatasetMixin):
    """VOC detection from xml files, each with its image, wherever they lie.

    Args:
        files (sequence): ``(xml path, image path)`` pairs, an example each.
        label_names (sequence of str): class names, a label is its index.
        use_difficult (bool): keep objects marked difficult.
        return_difficult (bool): also return the difficult flags.

    Examples are those of :class:`VOCBboxDataset`; the errors too.
    """

    def __init__(self, files, label_names, use_difficult=False, return_difficult=False):
        self.xml_paths = [pathlib.Path(xml_path) for xml_path, _ in files]
        self.img_paths = [pathlib.Path(image_path) for _, image_path in files]
        self.label_names = tuple(label_names)
        self._label_of = {name: i for i, name in enumerate(self.label_names)}
        self.use_difficult = use_difficult
        self.return_difficult = return_difficult

    def __len__(self):
        return len(self.xml_paths)

    def get_example(self, i):
        xml_path, image_path = self.xml_paths[i], self.img_paths[i]
        names, bbox, difficult, size, _ = parse_voc_xml(xml_path)
        unknown = [name for name in names if name not in self._label_of]
        if unknown:
            raise errors.AnnotationError(f'{xml_path}: field <name> {unknown[0]!r} is not '
                                          f'one of label_names')
        label = numpy.array([self._label_of[name] for name in names], numpy.int32)
        img = image.read_image(image_path)
        check_image_size(f'{xml_path}: <size>', size, img, image_path)
        check_inside_image(xml_path, names, bbox, img.shape[1:])  # for xml without <size>
        if not self.use_difficult:
            bbox, label, difficult = bbox[~difficult], label[~difficult], difficult[~difficult]
        # NOTE: boxes past the border (a few VOC files have them) are clipped to the image.
        bbox[:, 0::2] = numpy.clip(bbox[:, 0::2], 0, img.shape[2])
        bbox[:, 1::2] = numpy.clip(bbox[:, 1::2], 0, img.shape[1])
        if self.return_difficult:
            return img, bbox, label, difficult
        return img, bbox, label


class VOCBboxDataset(VOCFilesDataset):
    """PASCAL VOC detection (or any folder in the VOC layout).

    Args:
        data_dir (str): 'auto' for ``<dataset_root>/voc/VOCdevkit/VOC<year>`` (downloaded
            from host.robots.ox.ac.uk when absent), or a VOC-layout folder holding
            ``Annotations/<id>.xml``, ``JPEGImages/<id>.jpg`` and
            ``ImageSets/Main/<split>.txt``.
        split (str): 'train', 'val', 'trainval' or 'test' (or any list file's name).
        year (str): '2007' or '2012' (with 'auto'); 07+12 is
            ``ConcatenatedDataset(VOCBboxDataset(year='2007'), VOCBboxDataset())``.
        use_difficult (bool): keep objects marked difficult.
        return_difficult (bool): also return the difficult flags.
        label_names (sequence of str or None): class names, a label is its index. None:
            the 20 VOC classes for 'auto' or when every name in the folder's xml files is
            a VOC class; otherwise the sorted names found in ``Annotations/*.xml``.

    Example i is ``img, bbox, label`` (``, difficult`` with return_difficult):

        img        (3, H, W) float32  RGB in [0, 255]
        bbox       (R, 4) float32     (x_min, y_min, x_max, y_max), clipped to the image
        label      (R,) int32         index into ``label_names``
        difficult  (R,) bool

    Raises:
        cvzoo.errors.CorruptFileError: (when read) an xml is malformed or lacks a field,
            or names a class outside ``label_names``; the message names the file.
        cvzoo.errors.AnnotationError: (a CorruptFileError and a ValueError) a box with a
            NaN or infinite coordinate, or wholly outside its image, or a <size> that is
            not the image's as read (an EXIF-turned photo); the message names the file
            and the object.

    Warns:
        UserWarning: with class names inferred from the folder, the names that occur
        only once (a misspelt name would otherwise become a class of its own).
    """

    def __init__(self, data_dir='auto', split='trainval', year='2012', use_difficult=False,
                 return_difficult=False, label_names=None):
        self.data_dir = voc_paths.resolve_voc_dir(data_dir, split, year)
        self.ids = voc_paths.read_ids(self.data_dir, split)
        if label_names is None:
            label_names = voc_label_names.voc_bbox_label_names
            if data_dir != 'auto':
                counts = _names_in_folder(self.data_dir / 'Annotations')
                if not set(counts) <= set(label_names):
                    label_names = tuple(sorted(counts))
                    warn_rare_names(self.data_dir / 'Annotations', counts)
        files = [(self.data_dir / 'Annotations' / f'{i}.xml',
                  self.data_dir / 'JPEGImages' / f'{i}.jpg') for i in self.ids]
        super().__init__(files, label_names, use_difficult, return_difficult)
