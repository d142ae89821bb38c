"""What scripts/eval_detection.py needs from the models: the printed table.

The evaluation itself is ``cvzoo.evaluators.DetectionVOCEvaluator`` or
``DetectionCOCOEvaluator`` driving the model's predict() (models may not import
evaluators, so the script joins the two); ``--dataset`` is resolved by
:func:`cvzoo.datasets.registry.load_detection_dataset`. This module formats the result
beside the score the weights' source reports.
"""

import math

from cvzoo.models import zoo


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
        data (cvzoo.datasets.registry.DetectionDataset): what was evaluated.
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
