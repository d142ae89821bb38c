"""``cvzoo models --info NAME``: a model card, read from the model's weights entries.

For each weight key: the source (format and URLs), the licence of the weights, the
reported and measured scores, every file with its sha256, the preprocessing preset, and
the command line of the eval script that reproduces the score on this machine.
"""

import dataclasses

from cvzoo import models as zoo_api
from cvzoo.models.weights import weights_schema

UNKNOWN = 'unknown'
# The evaluation script of each task (a task not listed has none yet), and the --dataset
# argument of each Score.dataset (None: no local command).
EVAL_SCRIPTS = {
    'classification': 'scripts/eval_imagenet.py',
    'detection': 'scripts/eval_detection.py',
    'semantic_segmentation': 'scripts/eval_semantic_segmentation.py',
    'instance_segmentation': 'scripts/eval_instance_segmentation.py',
    'keypoint_detection': 'scripts/eval_keypoint_detection.py',
}
EVAL_DATASETS = {
    'imagenet_val': 'IMAGENET_VAL_DIR',
    'voc2007_test': 'voc07-test',
    'coco_val2017': 'coco-val2017',
    'voc2012_val': 'voc2012-val',
    'sbd_val': 'sbd-val',
    'camvid_test': 'camvid-test',
    'cityscapes_val': 'cityscapes-val',
    'ade20k_val': 'ade20k-val',
    'coco_test_dev': None,  # scored by the COCO evaluation server only
    'coco_val2017_voc_labels': None,  # no loader of COCO with VOC's 20 labels yet
}


def eval_command(model_name, key, score, task) -> str:
    """The command line that measures ``score`` for ``model_name`` with weights ``key``.

    >>> score = weights_schema.Score('map_voc07', 0.7, 'voc2007_test', 'x')
    >>> eval_command('ssd300', 'voc0712', score, 'detection').split(' --pretrained-model ')[1]
    'voc0712 --dataset voc07-test --use-07-metric'
    """
    if score.dataset == 'imagenet_val' and task != 'classification':
        return ('none here: the score is that of the ImageNet classifier these backbone '
                'weights come from')
    if task not in EVAL_SCRIPTS:
        return f'none here: cvzoo has no evaluation script for {task} yet'
    dataset = EVAL_DATASETS.get(score.dataset)
    if dataset is None:
        return f'none here: {score.dataset} has no local evaluation in cvzoo'
    command = (f'python {EVAL_SCRIPTS[task]} --model {model_name} --pretrained-model {key} '
               f'--dataset {dataset}')
    if score.metric == 'map_voc07':
        command += ' --use-07-metric'
    return command


def _score_line(label, score):
    if score is None:
        return f'  {label}: not measured yet'
    return (f'  {label}: {score.metric} {100 * score.value:.2f} on {score.dataset} '
            f'({score.source})')


def _preset_line(preset):
    fields = dataclasses.asdict(preset)
    return '  preprocessing: ' + ', '.join(f'{name}={value}' for name, value in fields.items()
                                            if value is not None)


def _entry_lines(model_name, key, weights, task):
    lines = [f'{key}:',
             f'  source: {weights.source_format}, {weights.url}',
             f'  licence: {weights.license or UNKNOWN}',
             f'  classes: {weights.n_class}',
             _score_line('reported', weights.reported),
             _score_line('measured (cvzoo)', weights.measured),
             '  files:']
    for weight_file in weights.all_files:
        sha256 = weight_file.sha256
        if sha256 == weights_schema.UNPUBLISHED:
            sha256 = 'unpublished (trusted on first use)'
        size = f', {weight_file.size} bytes' if weight_file.size else ''
        lines.append(f'    {weight_file.file_name}  sha256 {sha256}{size}')
        lines += [f'      {url}' for url in weight_file.urls]
    lines.append(_preset_line(weights.preset))
    lines.append(f'  reproduce: {eval_command(model_name, key, weights.reported, task)}')
    if weights.notes:
        lines.append(f'  notes: {weights.notes}')
    return lines


def model_card(name: str) -> str:
    """The card of a registered model, as text.

    Raises:
        ValueError: no such model (the message suggests close names).
    """
    cls = zoo_api.get_model_class(name)
    info = zoo_api.model_info(name)
    lines = [f'{name} ({info["task"]}): {info["class"]}']
    entries = getattr(cls, 'weights', None) or {}
    if not entries:
        lines.append('no pretrained weights')
    for key, weights in entries.items():
        lines += _entry_lines(name, key, weights, info['task'])
    return '\n'.join(lines)
