"""What scripts/eval_detection.py needs: datasets by name or folder, and the printed table.

The evaluation itself is ``cvzoo.evaluators.DetectionVOCEvaluator`` or
``DetectionCOCOEvaluator`` driving the model's predict() (models may not import
evaluators, so the script joins the two). This module resolves ``--dataset``:

    voc07-test      VOC2007 test (4952 images, difficult objects marked)
    coco-val2017    COCO val2017 (5000 images, crowd regions and areas)
    PATH            a VOC-layout folder (Annotations/, JPEGImages/, ImageSets/Main/)
                    or a COCO-layout folder (annotations/instances_<name>.json and
                    <name>/ with the images)

and formats the result beside the score the weights' source reports.
"""

import dataclasses
import math
import pathlib

import numpy

from cvzoo.datasets import COCOBboxDataset, SubDataset, TransformDataset, VOCBboxDataset
from cvzoo.models import zoo


@dataclasses.dataclass
class DetectionDataset:
    """A dataset ready for an evaluator.

    Attributes:
        dataset: examples ``img, bbox, label, difficult`` (VOC) or
            ``img, bbox, label, crowded, area`` (COCO).
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
    """Replace the label (example[2]) through a lookup table: dataset ids -> model ids."""

    def __init__(self, lookup):
        self.lookup = numpy.asarray(lookup, numpy.int32)

    def __call__(self, example):
        example = tuple(example)
        return example[:2] + (self.lookup[example[2]],) + example[3:]


def _on_model_labels(dataset, label_names, root):
    """Map a COCO-format dataset's labels onto the model's classes by name."""
    if label_names is None or tuple(dataset.label_names) == tuple(label_names):
        return dataset, tuple(dataset.label_names)
    unknown = [name for name in dataset.label_names if name not in label_names]
    if unknown:
        raise ValueError(f'dataset: {root} has categories {unknown} that are not among the '
                         f"model's label_names")
    lookup = [list(label_names).index(name) for name in dataset.label_names]
    return TransformDataset(dataset, _LabelMap(lookup)), tuple(label_names)


def _coco_folder(root):
    jsons = sorted((root / 'annotations').glob('instances_*.json'))
    if len(jsons) != 1:
        raise ValueError(f'dataset: {root} is neither a VOC-layout folder (ImageSets/Main/) '
                         f'nor a COCO-layout one with one annotations/instances_<name>.json '
                         f'(found {[p.name for p in jsons]})')
    image_dir = root / jsons[0].stem[len('instances_'):]
    dataset = COCOBboxDataset.from_json(jsons[0], image_dir if image_dir.is_dir() else root,
                                        use_crowded=True, return_crowded=True,
                                        return_area=True)
    return dataset, 'coco'


def _folder_dataset(root, label_names, split):
    """(dataset, protocol, label names) of a VOC- or COCO-layout folder."""
    if not root.is_dir():
        raise ValueError(f"dataset: expected 'voc07-test', 'coco-val2017' or a folder, "
                         f'got {str(root)!r}')
    if (root / 'ImageSets' / 'Main').is_dir():
        dataset, protocol = _voc(root, split, None, label_names)
        return dataset, protocol, tuple(dataset.label_names)
    dataset, protocol = _coco_folder(root)
    dataset, names = _on_model_labels(dataset, label_names, root)
    return dataset, protocol, names


def load_dataset(name, label_names=None, split='test', limit=None):
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


def reported_score(model_name, key):
    """The zoo entry's reported Score of a model name and weights key, or None."""
    weights = zoo.model_info(model_name)['weights'].get(key)
    return None if weights is None else zoo.Score(**weights['reported'])


def _percent(value):
    return 'nan' if value is None or math.isnan(value) else f'{100 * value:.2f}'


def format_report(report, data, reported=None):
    """The printed table: per-class AP and mAP (VOC) or the 12 COCO numbers.

    Args:
        report (dict): an evaluator's report.
        data (DetectionDataset): what was evaluated.
        reported (zoo.Score or None): the source's score, printed beside ours.

    Returns:
        str: lines of text.
    """
    lines = [f'dataset: {data.name} ({len(data.dataset)} images, {data.protocol} protocol)']
    if data.protocol == 'voc':
        lines += [f'  {name:<16s} {_percent(report.get(f"ap/{name}"))}'
                  for name in data.label_names]
        lines.append(f'  {"mAP":<16s} {_percent(report["map"])}')
    else:
        lines += [f'  {key:<44s} {_percent(value)}' for key, value in report.items()
                  if key.startswith(('map/', 'mar/'))]
    if reported is not None:
        lines.append(f'reported: {reported.metric} {_percent(reported.value)} on '
                     f'{reported.dataset} ({reported.source})')
    return '\n'.join(lines)
