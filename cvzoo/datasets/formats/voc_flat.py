"""VOC xml files beside their images in one folder, as LabelImg, CVAT and Roboflow export
them (no Annotations/, JPEGImages/ or ImageSets/), or in ``train/`` and ``valid/``
(``val/``, ``test/``) folders of such files (Roboflow's "Pascal VOC").

Each xml's image is its ``<filename>`` in the xml's folder, else the image of the xml's
stem (``a.xml``: ``a.jpg``, ``a.png``, ...); images without an xml are not read. The
classes are those of a ``classes.txt`` or ``labels.txt`` beside the files when there is
one, else the sorted names of the xml files' objects.
"""

import glob
import pathlib
import re

from cvzoo import errors
from cvzoo.datasets.formats.splits import VAL_NAMES, Splits
from cvzoo.datasets.image_folder.class_list import read_class_list
from cvzoo.datasets.image_folder.directory_parsing_label_dataset import IMAGE_EXTENSIONS
from cvzoo.datasets.voc.voc_bbox_dataset import VOCFilesDataset, parse_voc_xml, warn_rare_names

CLASS_LISTS = ('classes.txt', 'labels.txt')
# NOTE: read from the file's head only: a VOC annotation's root element is <annotation>
# (CVAT's own xml has <annotations>, which is not one)
_VOC_ROOT = re.compile(rb'<annotation[\s>]')


def _xml_files(folder):
    return sorted(p for p in folder.glob('*.xml') if p.is_file())


def _is_voc_folder(folder):
    """True when the folder's first xml file is a VOC annotation and an image lies beside."""
    xmls = _xml_files(folder) if folder.is_dir() else []
    if not xmls:
        return False
    with open(xmls[0], 'rb') as file:
        head = file.read(4096)
    return bool(_VOC_ROOT.search(head)) and any(
        p.suffix.lower() in IMAGE_EXTENSIONS for p in folder.iterdir())


def split_folders(root):
    """(train folder, validation folder or None): ``train/`` and the first of ``val/``,
    ``valid/``, ``validation/``, ``test/`` holding VOC files, else ``root`` alone."""
    if not _is_voc_folder(root / 'train'):
        return root, None
    val = next((root / name for name in VAL_NAMES if _is_voc_folder(root / name)), None)
    return root / 'train', val


def matches(root):
    """What makes ``root`` a flat VOC export (for messages), or None."""
    root = pathlib.Path(root)
    if not root.is_dir():
        return None
    train, val = split_folders(root)
    if train != root:
        return 'train/' + (f' and {val.name}/' if val else '') + ' of VOC xml files and images'
    return 'VOC xml files beside their images' if _is_voc_folder(root) else None


def image_of(xml_path, filename):
    """The image of ``xml_path``: its ``<filename>`` in the xml's folder, else the image
    of the xml's stem.

    Raises:
        cvzoo.errors.MissingFileError: neither is there; naming the xml and both.
    """
    folder = xml_path.parent
    if filename is not None:
        named = folder / pathlib.PureWindowsPath(filename).name  # a path, maybe Windows'
        if named.is_file():
            return named
    same_stem = sorted(p for p in folder.glob(glob.escape(xml_path.stem) + '.*')
                       if p.suffix.lower() in IMAGE_EXTENSIONS)
    if same_stem:
        return same_stem[0]
    told = f'its <filename> {filename!r} is not' if filename else 'it has no <filename> and is'
    raise errors.MissingFileError(f'{xml_path}: no image: {told} in {folder}, and no image '
                                  f'there is named {xml_path.stem}.*')


def _annotated_files(folder):
    """{(xml, image): the xml's class names} of a folder, read (and checked) now."""
    files = {}
    for xml_path in _xml_files(folder):
        annotation = parse_voc_xml(xml_path)
        files[xml_path, image_of(xml_path, annotation.filename)] = annotation.names
    return files


def _label_names(root, folders):
    """The class list beside the files, else the sorted names the xml files hold.

    Raises:
        cvzoo.errors.AnnotationError: an xml names a class the class list lacks.
    """
    lists = [root / name for name in CLASS_LISTS if (root / name).is_file()]
    counts = {}
    for files in folders:
        for (xml_path, _), names in files.items():
            for name in names:
                counts.setdefault(name, [0, xml_path])[0] += 1
    if not lists:
        warn_rare_names(root, {name: count for name, (count, _) in counts.items()})
        return tuple(sorted(counts))
    label_names = read_class_list(lists[0])
    unknown = sorted(set(counts) - set(label_names))
    if unknown:
        raise errors.AnnotationError(f'{counts[unknown[0]][1]}: class {unknown[0]!r} is not '
                                     f'in {lists[0]} {list(label_names)}')
    return label_names


def read(root):
    """Splits of a flat VOC export (``img, bbox, label``; difficult objects left out).

    Raises:
        cvzoo.errors.MissingFileError: an xml whose image is not there.
        cvzoo.errors.CorruptFileError, cvzoo.errors.AnnotationError: an xml that is not
            valid or lacks a field, or a class outside the class list; naming the file
            (and the object).
    """
    root = pathlib.Path(root)
    train_folder, val_folder = split_folders(root)
    folders = [_annotated_files(train_folder)]
    if val_folder is not None:
        folders.append(_annotated_files(val_folder))
    label_names = _label_names(root, folders)
    train, *val = (VOCFilesDataset(list(files), label_names) for files in folders)
    return Splits(train, val[0] if val else None, label_names)
