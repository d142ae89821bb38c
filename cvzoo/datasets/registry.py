"""The datasets the scripts name: ``--dataset`` resolved into a dataset with its label names.

Models take only label names from ``cvzoo.datasets`` (DESIGN.md); the choice of a
dataset by name or folder lives here, and ``scripts/eval_*.py`` and ``scripts/train_*.py``
call it.

Detection (:func:`load_detection_dataset`):

    voc07-test      VOC2007 test (4952 images, difficult objects marked)
    coco-val2017    COCO val2017 (5000 images, crowd regions and areas)
    PATH            a VOC-layout folder (Annotations/, JPEGImages/, ImageSets/Main/)
                    or a COCO-layout folder (annotations/instances_<name>.json and
                    <name>/ with the images)

Semantic segmentation (:func:`load_semantic_segmentation_dataset`):

    camvid-test     CamVid test of the SegNet tutorial (233 images, void ignored)
    voc2012-val     PASCAL VOC2012 segmentation val (1449 images)
    cityscapes-val  Cityscapes val (500 images, 19 train ids)
    ade20k-val      ADE20K (SceneParsing) validation (2000 images, 150 classes)
    PATH            a folder holding images/ and labels/ (label PNGs named as the images),
                    and classes.txt (a class name a line) when it has names

Instance segmentation (:func:`load_instance_segmentation_dataset`):

    coco-val2017    COCO val2017 masks (5000 images, crowd regions and areas; COCO protocol)
    sbd-val         SBD val (2857 images; VOC protocol, 11-point AP as ChainerCV's FCIS)
    voc2012-val     PASCAL VOC2012 SegmentationObject val (1449 images; VOC protocol)
    PATH            a COCO-format json (its images in --data-dir, else in the folder
                    named as the json without 'instances_' beside or above it, else the
                    json's folder), or a COCO-layout folder as for detection

Keypoint detection (:func:`load_keypoint_detection_dataset`):

    coco-val2017    COCO val2017 person keypoints (5000 images, crowds and areas)
    PATH            a person_keypoints json (its images found as for instance
                    segmentation) or a folder with one annotations/person_keypoints_<name>.json

Detection training (:func:`load_detection_training_splits`), a train and a test split:

    voc07           VOC2007 trainval / VOC2007 test
    voc07+12        VOC2007+2012 trainval / VOC2007 test
    PATH            a VOC-layout folder with ImageSets/Main/train.txt and test.txt

Classification (:func:`load_classification_dataset`): a folder per class (ImageNet's
validation layout with wnid folder names, or any class folders) or a text file of
``relative/path label`` lines.

Classification training (:func:`load_classification_training_splits`):

    digits          scikit-learn's 8x8 digits (1797 images, 10 classes), 80% / 20%
    PATH            a folder per class; 80% / 20% at random, or all of it with a
                    validation folder given

>>> sorted(SEGMENTATION_SPLITS)
['ade20k-val', 'camvid-test', 'cityscapes-val', 'voc2012-val']
>>> INSTANCE_SEGMENTATION_SPLITS
('coco-val2017', 'sbd-val', 'voc2012-val')
"""

import dataclasses
import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets.ade20k.ade20k_semantic_segmentation_dataset import (
    ADE20KSemanticSegmentationDataset,
)
from cvzoo.datasets.camvid.camvid_dataset import CamVidDataset
from cvzoo.datasets.cityscapes.cityscapes_semantic_segmentation_dataset import (
    CityscapesSemanticSegmentationDataset,
)
from cvzoo.datasets.coco.coco_bbox_dataset import COCOBboxDataset
from cvzoo.datasets.coco.coco_instance_segmentation_dataset import (
    COCOInstanceSegmentationDataset,
)
from cvzoo.datasets.coco.coco_keypoint_dataset import COCOKeypointDataset
from cvzoo.datasets.image_folder.class_list import CLASS_LIST, read_class_list
from cvzoo.datasets.image_folder.directory_parsing_label_dataset import (
    DirectoryParsingLabelDataset,
)
from cvzoo.datasets.image_folder.image_label_directory_dataset import ImageLabelDirectoryDataset
from cvzoo.datasets.imagenet.imagenet_label_names import imagenet_wnids
from cvzoo.datasets.sbd.sbd_instance_segmentation_dataset import SBDInstanceSegmentationDataset
from cvzoo.datasets.sub_dataset import SubDataset, split_dataset_random
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.datasets.voc.voc_bbox_dataset import VOCBboxDataset
from cvzoo.datasets.voc.voc_detection_splits import voc_detection_splits
from cvzoo.datasets.voc.voc_instance_segmentation_dataset import VOCInstanceSegmentationDataset
from cvzoo.datasets.voc.voc_semantic_segmentation_dataset import VOCSemanticSegmentationDataset
from cvzoo.utils import image

SEGMENTATION_SPLITS = {'camvid-test': (CamVidDataset, 'test'),
                       'voc2012-val': (VOCSemanticSegmentationDataset, 'val'),
                       'cityscapes-val': (CityscapesSemanticSegmentationDataset, 'val'),
                       'ade20k-val': (ADE20KSemanticSegmentationDataset, 'val')}


@dataclasses.dataclass
class DetectionDataset:
    """A dataset ready for an evaluator.

    Attributes:
        dataset: examples ``img, bbox, label, difficult`` (VOC) or
            ``img, bbox, label, crowded, area`` (COCO), or for keypoints
            ``img, point, visible, label, bbox, crowded, area``.
        protocol (str): 'voc' or 'coco'.
        label_names (tuple of str): the dataset's class names, label i is name i.
        name (str): what was asked for, for the printout.
    """

    dataset: object
    protocol: str
    label_names: tuple
    name: str


def _voc(data_dir, split, year, label_names):
    dataset = VOCBboxDataset(data_dir, split=split, year=year, use_difficult=True,
                             return_difficult=True, label_names=label_names)
    return dataset, 'voc'


class _LabelMap:
    """Replace the label (example[index]) through a lookup table: dataset ids -> model ids."""

    def __init__(self, lookup, index=2):
        self.lookup = numpy.asarray(lookup, numpy.int32)
        self.index = index

    def __call__(self, example):
        example = tuple(example)
        i = self.index
        return example[:i] + (self.lookup[example[i]],) + example[i + 1:]


def map_labels_by_name(dataset, label_names, root, label_index=2):
    """Map a dataset's labels (``example[label_index]``) onto ``label_names`` by name.

    Returns:
        tuple: the dataset (wrapped when its names differ) and the names its labels index.

    Raises:
        cvzoo.errors.UsageError: the dataset has a class that ``label_names`` lacks.
    """
    if label_names is None or tuple(dataset.label_names) == tuple(label_names):
        return dataset, tuple(dataset.label_names)
    unknown = [name for name in dataset.label_names if name not in label_names]
    if unknown:
        raise errors.UsageError(f'dataset: {root} has categories {unknown} that are not among '
                                f"the model's label_names")
    lookup = [list(label_names).index(name) for name in dataset.label_names]
    return TransformDataset(dataset, _LabelMap(lookup, label_index)), tuple(label_names)


def _coco_folder(root, dataset_class=COCOBboxDataset, annotation='instances'):
    jsons = sorted((root / 'annotations').glob(f'{annotation}_*.json'))
    if len(jsons) != 1:
        raise errors.UsageError(f'dataset: {root} is neither a VOC-layout folder '
                                f'(ImageSets/Main/) nor a COCO-layout one with one '
                                f'annotations/{annotation}_<name>.json '
                                f'(found {[p.name for p in jsons]})')
    image_dir = root / jsons[0].stem[len(annotation) + 1:]
    dataset = dataset_class.from_json(jsons[0], image_dir if image_dir.is_dir() else root,
                                      use_crowded=True, return_crowded=True,
                                      return_area=True)
    return dataset, 'coco'


def _folder_dataset(root, label_names, split):
    """(dataset, protocol, label names) of a VOC- or COCO-layout folder."""
    if not root.is_dir():
        raise errors.UsageError(f"dataset: expected 'voc07-test', 'coco-val2017' or a folder, "
                                f'got {str(root)!r}')
    if (root / 'ImageSets' / 'Main').is_dir():
        dataset, protocol = _voc(root, split, None, label_names)
        return dataset, protocol, tuple(dataset.label_names)
    dataset, protocol = _coco_folder(root)
    dataset, names = map_labels_by_name(dataset, label_names, root)
    return dataset, protocol, names


def load_detection_dataset(name, label_names=None, split='test', limit=None):
    """Resolve ``--dataset`` into a :class:`DetectionDataset`.

    Args:
        name (str): 'voc07-test', 'coco-val2017' or a folder (see the module docstring).
        label_names (sequence of str or None): the model's class names; the object
            names of a VOC-layout folder and the categories of a COCO-layout folder
            are mapped onto them by name (an unknown name is an error).
        split (str): the list file of a VOC-layout folder (ImageSets/Main/<split>.txt).
        limit (int or None): keep only the first ``limit`` images.

    Raises:
        ValueError: an unknown name, or a folder of neither layout.
    """
    if name == 'voc07-test':
        dataset, protocol = _voc('auto', 'test', '2007', None)
        names = tuple(dataset.label_names)
    elif name == 'coco-val2017':
        dataset = COCOBboxDataset(split='val', year='2017', use_crowded=True,
                                  return_crowded=True, return_area=True)
        protocol, names = 'coco', tuple(dataset.label_names)
    else:
        dataset, protocol, names = _folder_dataset(pathlib.Path(name), label_names, split)
    if limit is not None:
        dataset = SubDataset(dataset, 0, min(int(limit), len(dataset)))
    return DetectionDataset(dataset, protocol, names, name)


def load_detection_training_splits(name):
    """Resolve a detection train script's ``--dataset`` (see the module docstring).

    Returns:
        tuple: the training set (``img, bbox, label``), the test set (with difficult
        flags) and the label names.
    """
    return voc_detection_splits(name)


INSTANCE_SEGMENTATION_SPLITS = ('coco-val2017', 'sbd-val', 'voc2012-val')


@dataclasses.dataclass
class InstanceSegmentationDataset:
    """A dataset ready for an instance segmentation evaluator.

    Attributes:
        dataset: examples ``img, mask, label`` (VOC protocol) or
            ``img, mask, label, crowded, area`` (COCO protocol).
        protocol (str): 'voc' or 'coco'.
        label_names (tuple of str): the class names, label i is name i.
        name (str): what was asked for, for the printout.
        use_07_metric (bool or None): the VOC AP the dataset is reported with (True: the
            11-point VOC2007 AP, False: the area under the curve; None for COCO).
    """

    dataset: object
    protocol: str
    label_names: tuple
    name: str
    use_07_metric: bool | None = None


def coco_image_dir(json_path, annotation='instances'):
    """The image folder of a COCO-format json (see the module docstring)."""
    prefix = annotation + '_'
    folder = json_path.stem[len(prefix):] if json_path.stem.startswith(
        prefix) else json_path.stem
    for candidate in (json_path.parent.parent / folder, json_path.parent / folder):
        if candidate.is_dir():
            return candidate
    return json_path.parent


def _coco_instance_dataset(path, data_dir, dataset_class=COCOInstanceSegmentationDataset,
                           annotation='instances', splits=INSTANCE_SEGMENTATION_SPLITS):
    if path.is_file():
        image_dir = pathlib.Path(data_dir) if data_dir else coco_image_dir(path, annotation)
        return dataset_class.from_json(
            path, image_dir, use_crowded=True, return_crowded=True, return_area=True)
    if not path.is_dir():
        raise errors.UsageError(f'dataset: expected one of {splits}, a '
                                f'COCO-format json or a COCO-layout folder, got {str(path)!r}')
    return _coco_folder(path, dataset_class, annotation)[0]


def load_instance_segmentation_dataset(name, label_names=None, data_dir=None, limit=None):
    """Resolve an instance segmentation ``--dataset`` (see the module docstring).

    Args:
        name (str): a split name, a COCO-format json or a COCO-layout folder.
        label_names (sequence of str or None): the model's class names; the dataset's
            classes are mapped onto them by name (an unknown name is an error).
        data_dir (str or None): the split's root (None: the dataset's 'auto'), or the
            image folder of a json.
        limit (int or None): keep only the first ``limit`` images.

    Raises:
        ValueError: an unknown name, or a path of neither form.
    """
    use_07_metric = None
    if name == 'coco-val2017':
        dataset = COCOInstanceSegmentationDataset(
            data_dir or 'auto', split='val', year='2017', use_crowded=True,
            return_crowded=True, return_area=True)
        protocol = 'coco'
    elif name in ('sbd-val', 'voc2012-val'):
        if name == 'sbd-val':
            dataset = SBDInstanceSegmentationDataset(data_dir or 'auto', split='val')
        else:
            dataset = VOCInstanceSegmentationDataset(data_dir or 'auto', split='val')
        protocol, use_07_metric = 'voc', name == 'sbd-val'
    else:
        dataset, protocol = _coco_instance_dataset(pathlib.Path(name), data_dir), 'coco'
    dataset, names = map_labels_by_name(dataset, label_names, name)
    if limit is not None:
        dataset = SubDataset(dataset, 0, min(int(limit), len(dataset)))
    return InstanceSegmentationDataset(dataset, protocol, names, name, use_07_metric)


KEYPOINT_DETECTION_SPLITS = ('coco-val2017',)


def load_keypoint_detection_dataset(name, label_names=None, data_dir=None, limit=None):
    """Resolve a keypoint detection ``--dataset`` (see the module docstring).

    Args:
        name (str): 'coco-val2017', a person_keypoints json or a COCO-layout folder.
        label_names (sequence of str or None): the model's class names; the dataset's
            classes are mapped onto them by name.
        data_dir (str or None): the split's root (None: 'auto'), or the image folder of
            a json.
        limit (int or None): keep only the first ``limit`` images.

    Returns:
        DetectionDataset: examples ``img, point, visible, label, bbox, crowded, area``
        and the protocol 'coco'.
    """
    if name == 'coco-val2017':
        dataset = COCOKeypointDataset(data_dir or 'auto', split='val', year='2017',
                                      use_crowded=True, return_crowded=True, return_area=True)
    else:
        dataset = _coco_instance_dataset(pathlib.Path(name), data_dir, COCOKeypointDataset,
                                         'person_keypoints', KEYPOINT_DETECTION_SPLITS)
    # NOTE: the label is example[3] here (example[2] is ``visible``).
    dataset, names = map_labels_by_name(dataset, label_names, name, label_index=3)
    if limit is not None:
        dataset = SubDataset(dataset, 0, min(int(limit), len(dataset)))
    return DetectionDataset(dataset, 'coco', names, name)


@dataclasses.dataclass
class SegmentationDataset:
    """A dataset ready for SemanticSegmentationEvaluator.

    Attributes:
        dataset: examples ``img, label`` ((3, H, W) float32, (H, W) int32, -1 ignored).
        label_names (tuple of str or None): the dataset's class names.
        name (str): what was asked for, for the printout.
    """

    dataset: object
    label_names: tuple | None
    name: str


def load_semantic_segmentation_dataset(name, data_dir=None, ignore_label=None, limit=None):
    """Resolve ``--dataset`` (see the module docstring).

    Args:
        name (str): a split name or a folder.
        data_dir (str or None): the split's root (None: the dataset's 'auto').
        ignore_label (int or None): for a folder, the label value read as ignored (e.g.
            255).
        limit (int or None): keep only the first ``limit`` images.

    Raises:
        ValueError: neither a known split nor a folder with images/ and labels/.
    """
    if name in SEGMENTATION_SPLITS:
        dataset_class, split = SEGMENTATION_SPLITS[name]
        dataset = dataset_class(data_dir or 'auto', split=split)
    else:
        root = pathlib.Path(name)
        if not (root / 'images').is_dir() or not (root / 'labels').is_dir():
            raise errors.UsageError(f'dataset: expected one of {sorted(SEGMENTATION_SPLITS)} '
                                    f'or a folder with images/ and labels/, got {name!r}')
        class_list = root / CLASS_LIST
        label_names = read_class_list(class_list) if class_list.is_file() else None
        dataset = ImageLabelDirectoryDataset(root / 'images', root / 'labels', ignore_label,
                                             label_names)
    label_names = getattr(dataset, 'label_names', None)
    if limit is not None:
        dataset = SubDataset(dataset, 0, min(int(limit), len(dataset)))
    return SegmentationDataset(dataset, label_names, name)


class _ListDataset:
    """``img, label`` pairs of a file list (paths relative to the list's folder)."""

    def __init__(self, list_path):
        root = pathlib.Path(list_path).parent
        self.img_paths, labels = [], []
        for number, line in enumerate(pathlib.Path(list_path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            parts = line.rsplit(maxsplit=1)
            if len(parts) != 2 or not parts[1].lstrip('-').isdigit():
                raise errors.AnnotationError(f'dataset: {list_path} line {number}: expected '
                                             f'"path label", got {line!r}')
            self.img_paths.append(root / parts[0])
            labels.append(int(parts[1]))
        self.labels = numpy.array(labels, numpy.int32)

    def __len__(self):
        return len(self.img_paths)

    def __getitem__(self, i):
        return image.read_image(self.img_paths[i]), self.labels[i]


def load_classification_dataset(path):
    """A folder per class or a file list as a sequence of ``img, label``.

    Wnid folder names (``n01440764``...) take their index in ImageNet's sorted synset
    list, so a folder holding only some classes keeps the 1000-class labels.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    path = pathlib.Path(path)
    if path.is_file():
        return _ListDataset(path)
    dataset = DirectoryParsingLabelDataset(path)
    wnid_index = {w: i for i, w in enumerate(imagenet_wnids)}
    if dataset.label_names and all(n in wnid_index for n in dataset.label_names):
        mapping = numpy.array([wnid_index[n] for n in dataset.label_names], numpy.int32)
        dataset.labels = mapping[dataset.labels]
    return dataset


def load_classification_training_splits(name, val=None, seed=0):
    """Resolve a classifier train script's ``--dataset`` (see the module docstring).

    Args:
        name (str): 'digits' or a folder per class.
        val (str or None): a validation folder per class; None splits ``name`` 80 / 20
            at random (``seed``).
        seed (int): of the random split.

    Returns:
        tuple: the training and validation sets (``img, label``) and the label names.
    """
    if name == 'digits':
        return _digits(seed)
    dataset = DirectoryParsingLabelDataset(name)
    check_class_folders(dataset, name)
    if val:
        return dataset, DirectoryParsingLabelDataset(val), dataset.label_names
    train, held_out = split_dataset_random(dataset, int(0.8 * len(dataset)), seed=seed)
    return train, held_out, dataset.label_names


def check_class_folders(dataset, root):
    """Refuse a folder per class with fewer than two classes holding images: a
    classifier trained on it learns nothing, however good its accuracy looks."""
    counts = numpy.bincount(dataset.labels, minlength=len(dataset.label_names))
    found = [name for name, count in zip(dataset.label_names, counts) if count]
    if len(found) < 2:
        raise errors.UsageError(
            f'dataset: {root} must hold a folder per class, with images in at least two '
            f'of them; found images in {found or "none"} of {list(dataset.label_names)}')


def _digits(seed):
    """scikit-learn's digits as (3, 8, 8) float32 images in [0, 255]; an 80/20 split."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    imgs = numpy.repeat(digits.images[:, None] * (255.0 / 16.0), 3, axis=1).astype(numpy.float32)
    labels = digits.target.astype(numpy.int32)
    order = numpy.random.RandomState(seed).permutation(len(labels))
    n_train = int(0.8 * len(labels))
    split = [order[:n_train], order[n_train:]]
    label_names = tuple(str(k) for k in range(10))
    return [[(imgs[i], labels[i]) for i in part] for part in split] + [label_names]
