"""What scripts/eval_detection.py needs from the models: the printed table.

The evaluation itself is ``cvzoo.evaluators.DetectionVOCEvaluator`` or
``DetectionCOCOEvaluator`` driving the model's predict() (models may not import
evaluators, so the script joins the two); ``--dataset`` is resolved by
:func:`cvzoo.datasets.registry.load_detection_dataset`. This module formats the result
beside the score the weights' source reports.
"""

import math

from cvzoo.models import zoo


def load_evaluated_model(name, key, device='cpu'):
    """The zoo model ``name`` with weights ``key`` on ``device``, at its 'evaluate' preset."""
    model = zoo.get_model(name, pretrained_model=key)
    model.to_device(device)
    model.use_preset('evaluate')
    return model


def timing_line(name, key, n_images, seconds):
    """'<name> (<key>): N images in S s (s per image)'."""
    return (f'{name} ({key}): {n_images} images in {seconds:.1f} s '
            f'({seconds / max(n_images, 1):.2f} s per image)')


def reported_score(model_name, key):
    """The zoo entry's reported Score of a model name and weights key, or None."""
    weights = zoo.model_info(model_name)['weights'].get(key)
    return None if weights is None else zoo.Score(**weights['reported'])


def percent(value):
    """A fraction as a percentage with two decimals ('nan' for None or nan)."""
    return 'nan' if value is None or math.isnan(value) else f'{100 * value:.2f}'


def header_line(data):
    """'dataset: NAME (N images, P protocol)' of a registry dataset."""
    return f'dataset: {data.name} ({len(data.dataset)} images, {data.protocol} protocol)'


def coco_lines(report):
    """The twelve COCO summary numbers of a report, one line each."""
    return [f'  {key:<44s} {percent(value)}' for key, value in report.items()
            if key.startswith(('map/', 'mar/'))]


def reported_line(reported, measured=None):
    """The source's score, and ours of the same metric beside it when known."""
    line = (f'reported: {reported.metric} {percent(reported.value)} on {reported.dataset} '
            f'({reported.source})')
    return line if measured is None else f'{line}; measured: {percent(measured)}'


def format_report(report, data, reported=None):
    """The printed table: per-class AP and mAP (VOC) or the 12 COCO numbers.

    Args:
        report (dict): an evaluator's report.
        data (cvzoo.datasets.registry.DetectionDataset): what was evaluated.
        reported (zoo.Score or None): the source's score, printed beside ours.

    Returns:
        str: lines of text.
    """
    lines = [header_line(data)]
    if data.protocol == 'voc':
        lines += [f'  {name:<16s} {percent(report.get(f"ap/{name}"))}'
                  for name in data.label_names]
        lines.append(f'  {"mAP":<16s} {percent(report["map"])}')
    else:
        lines += coco_lines(report)
    if reported is not None:
        lines.append(reported_line(reported))
    return '\n'.join(lines)
