"""What scripts/eval_instance_segmentation.py needs from the models: the printed table.

The evaluation itself is ``cvzoo.evaluators.InstanceSegmentationVOCEvaluator`` or
``InstanceSegmentationCOCOEvaluator`` driving the model's predict() (models may not
import evaluators, so the script joins the two); ``--dataset`` is resolved by
:func:`cvzoo.datasets.registry.load_instance_segmentation_dataset`. This module formats
the result beside the score the weights' source reports, with the detection script's
pieces (:mod:`cvzoo.models.detection.evaluate`).

>>> VOC_IOU_THRESHS
(0.5, 0.7)
"""

from cvzoo.models.detection import evaluate as detection_evaluate

# mask AP is reported at these IoUs on SBD and VOC (ChainerCV's FCIS evaluation)
VOC_IOU_THRESHS = (0.5, 0.7)
COCO_MAIN_KEY = 'map/iou=0.50:0.95/area=all/max_dets=100'


def voc_key(thresh, name=None):
    """The VOC evaluator's report key of one threshold: 'map/iou=0.50' or
    'ap/iou=0.50/<name>'."""
    return f'map/iou={thresh:.2f}' if name is None else f'ap/iou={thresh:.2f}/{name}'


# a reported metric -> the report key measuring the same thing (for an instance
# segmenter, 'map_voc07' is the mask mAP at IoU 0.5 with the 11-point AP, as FCIS's)
MEASURED_KEYS = {'mask_map_coco': COCO_MAIN_KEY, 'map_voc07': voc_key(0.5)}


def _voc_lines(report, label_names, use_07_metric):
    columns = ''.join(f'{f"AP@{t:g}":>10s}' for t in VOC_IOU_THRESHS)
    lines = [f'  VOC metric: {"11-point (VOC2007)" if use_07_metric else "all-point"}',
             f'  {"class":<16s}{columns}']
    for name in label_names:
        cells = ''.join(f'{detection_evaluate.percent(report.get(voc_key(t, name))):>10s}'
                        for t in VOC_IOU_THRESHS)
        lines.append(f'  {name:<16s}{cells}')
    cells = ''.join(f'{detection_evaluate.percent(report[voc_key(t)]):>10s}'
                    for t in VOC_IOU_THRESHS)
    lines.append(f'  {"mAP":<16s}{cells}')
    return lines


def format_report(report, data, reported=None):
    """The printed table: per-class mask AP at IoU 0.5 and 0.7 and their means (VOC),
    or the 12 COCO mask numbers.

    Args:
        report (dict): an evaluator's report (VOC: keys of :func:`voc_key`).
        data (cvzoo.datasets.registry.InstanceSegmentationDataset): what was evaluated.
        reported (zoo.Score or None): the source's score, printed beside ours.

    Returns:
        str: lines of text.
    """
    lines = [detection_evaluate.header_line(data)]
    if data.protocol == 'voc':
        lines += _voc_lines(report, data.label_names, data.use_07_metric)
    else:
        lines += detection_evaluate.coco_lines(report)
    if reported is not None:
        measured = report.get(MEASURED_KEYS.get(reported.metric))
        lines.append(detection_evaluate.reported_line(reported, measured))
    return '\n'.join(lines)
