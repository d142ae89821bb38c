"""What scripts/eval_semantic_segmentation.py needs: datasets by name, the printed table.

The evaluation itself is ``cvzoo.evaluators.SemanticSegmentationEvaluator`` driving the
model's predict() (models may not import evaluators, so the script joins the two). This
module resolves ``--dataset``:

    camvid-test     CamVid test of the SegNet tutorial (233 images, void ignored)
    voc2012-val     PASCAL VOC2012 segmentation val (1449 images)
    cityscapes-val  Cityscapes val (500 images, 19 train ids)
    ade20k-val      ADE20K (SceneParsing) validation (2000 images, 150 classes)
    PATH            a folder holding images/ and labels/ (label PNGs named as the images)

and formats the result beside the scores the weights' source reports.
"""

import dataclasses
import math
import pathlib

from cvzoo.datasets import (
    ADE20KSemanticSegmentationDataset,
    CamVidDataset,
    CityscapesSemanticSegmentationDataset,
    ImageLabelDirectoryDataset,
    SubDataset,
    VOCSemanticSegmentationDataset,
)
from cvzoo.models import zoo

SPLITS = {'camvid-test': (CamVidDataset, 'test'),
          'voc2012-val': (VOCSemanticSegmentationDataset, 'val'),
          'cityscapes-val': (CityscapesSemanticSegmentationDataset, 'val'),
          'ade20k-val': (ADE20KSemanticSegmentationDataset, 'val')}
# Reported scores beyond the one of the zoo entry (a fraction, as Score.value).
EXTRA_REPORTED = {
    # sacmehta/ESPNet README, CamVid table ("Class avg.").
    ('espnet', 'camvid'): {'mean_class_accuracy': 0.6830},
}


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


def load_dataset(name, data_dir=None, ignore_label=None, limit=None):
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
    if name in SPLITS:
        dataset_class, split = SPLITS[name]
        dataset = dataset_class(data_dir or 'auto', split=split)
    else:
        root = pathlib.Path(name)
        if not (root / 'images').is_dir() or not (root / 'labels').is_dir():
            raise ValueError(f'dataset: expected one of {sorted(SPLITS)} or a folder with '
                             f'images/ and labels/, got {name!r}')
        dataset = ImageLabelDirectoryDataset(root / 'images', root / 'labels', ignore_label)
    label_names = getattr(dataset, 'label_names', None)
    if limit is not None:
        dataset = SubDataset(dataset, 0, min(int(limit), len(dataset)))
    return SegmentationDataset(dataset, label_names, name)


def reported_scores(model_name, key):
    """{'miou': 0.5564, ...}: what the source of weights ``key`` reports (fractions)."""
    entries = zoo.model_info(model_name)['weights']
    scores = dict(EXTRA_REPORTED.get((model_name, key), {}))
    if key in entries:
        scores[entries[key]['reported']['metric']] = entries[key]['reported']['value']
    return scores


def _percent(value):
    return '   n/a' if value is None or math.isnan(value) else f'{100 * value:6.2f}'


def format_report(report, label_names, reported):
    """The per-class IoU and accuracy table, then mIoU and accuracies beside ``reported``.

    Args:
        report (dict): SemanticSegmentationEvaluator's report.
        label_names (sequence of str): the classes of the per-class keys.
        reported (dict): metric -> fraction, from :func:`reported_scores`.

    Returns:
        str: the lines, in percent.
    """
    lines = [f'{"class":<20}{"IoU":>8}{"accuracy":>10}']
    for name in label_names:
        lines.append(f'{name:<20}{_percent(report.get(f"iou/{name}")):>8}'
                     f'{_percent(report.get(f"class_accuracy/{name}")):>10}')
    for title, key in (('mIoU', 'miou'), ('pixel accuracy', 'pixel_accuracy'),
                       ('mean class accuracy', 'mean_class_accuracy')):
        claim = f'   (reported {_percent(reported[key]).strip()})' if key in reported else ''
        lines.append(f'{title:<20}{_percent(report[key]):>8}{claim}')
    return '\n'.join(lines)
