"""Evaluate a detector of the zoo: per-class AP and mAP (VOC) or the 12 COCO numbers.

    CVZOO_WEIGHTS_MIRROR=../shared/data/weights python scripts/eval_detection.py \
        --model yolo_fastest --pretrained-model voc --dataset voc07-test

--dataset is voc07-test, coco-val2017, or a VOC- or COCO-layout folder (see
cvzoo.models.detection.evaluate). The model runs with its 'evaluate' preset. The VOC
metric is the model's own convention unless --use-07-metric / --no-use-07-metric says
otherwise (Darknet models: the all-point area, as Darknet's `detector map`).
"""

import argparse
import pathlib
import sys
import time

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.cli import entry, eval_options
from cvzoo.datasets import registry
from cvzoo.evaluators import DetectionCOCOEvaluator, DetectionVOCEvaluator
from cvzoo.models.detection import evaluate


def build_evaluator(data, model, use_07_metric, batchsize):
    if data.protocol == 'voc':
        if use_07_metric is None:
            use_07_metric = getattr(model, 'use_07_metric', True)
        return DetectionVOCEvaluator(data.dataset, model, use_07_metric=use_07_metric,
                                     label_names=data.label_names, batchsize=batchsize)
    return DetectionCOCOEvaluator(data.dataset, model, label_names=data.label_names,
                                  batchsize=batchsize, with_crowded=True, with_area=True)


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    eval_options.add_eval_options(parser, example_model='yolo_fastest', batchsize=8)
    parser.add_argument('--dataset', default='voc07-test')
    parser.add_argument('--split', default='test', help='list file of a VOC-layout folder')
    parser.add_argument('--use-07-metric', action=argparse.BooleanOptionalAction,
                        default=None, help='VOC2007 11-point AP (default: the model\'s)')
    args = parser.parse_args(argv)

    model = evaluate.load_evaluated_model(args.model, args.pretrained_model, args.device)
    data = registry.load_detection_dataset(args.dataset, model.label_names, args.split,
                                           args.limit)
    evaluator = build_evaluator(data, model, args.use_07_metric, args.batchsize)
    start = time.perf_counter()
    report = evaluator.evaluate()
    seconds = time.perf_counter() - start
    print(evaluate.timing_line(args.model, args.pretrained_model, len(data.dataset), seconds))
    if data.protocol == 'voc':
        print(f'VOC metric: {"11-point (VOC2007)" if evaluator.use_07_metric else "all-point"}')
    print(evaluate.format_report(report, data,
                                 evaluate.reported_score(args.model, args.pretrained_model)))
    return report


if __name__ == '__main__':
    entry.run(main)
