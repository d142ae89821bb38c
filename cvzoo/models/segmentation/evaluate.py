"""What scripts/eval_semantic_segmentation.py needs from the models: the printed table.

The evaluation itself is ``cvzoo.evaluators.SemanticSegmentationEvaluator`` driving the
model's predict() (models may not import evaluators, so the script joins the two);
``--dataset`` is resolved by
:func:`cvzoo.datasets.registry.load_semantic_segmentation_dataset`. This module formats
the result beside the scores the weights' source reports.
"""

import math

from cvzoo.models import zoo

# Reported scores beyond the one of the zoo entry (a fraction, as Score.value).
EXTRA_REPORTED = {
    # sacmehta/ESPNet README, CamVid table ("Class avg.").
    ('espnet', 'camvid'): {'mean_class_accuracy': 0.6830},
}


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
