"""Evaluate a keypoint detector of the zoo: COCO keypoint AP/AR (OKS, pycocotools' rules).

    CVZOO_WEIGHTS_MIRROR=../shared/data/weights python scripts/eval_keypoint_detection.py \
        --model keypointrcnn_resnet50_fpn --pretrained-model coco --dataset coco-val2017

--dataset is coco-val2017, a person_keypoints json (its images in --data-dir) or a
COCO-layout folder (see cvzoo.datasets.registry). The model runs with its 'evaluate'
preset. Prints the ten numbers of COCOeval's keypoint summary, and the weights' reported
keypoint AP beside the measured one.
"""

import pathlib
import sys
import time

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.cli import entry, eval_options
from cvzoo.datasets import registry
from cvzoo.evaluators import KeypointDetectionCOCOEvaluator
from cvzoo.models.detection import evaluate as detection_evaluate

# a reported metric -> the report key measuring the same thing
MEASURED_KEYS = {'keypoint_map_coco': 'map/iou=0.50:0.95/area=all/max_dets=20'}


def format_report(report, data, reported=None):
    """The printed table: the ten COCO keypoint numbers, then the reported score."""
    lines = [detection_evaluate.header_line(data)] + detection_evaluate.coco_lines(report)
    if reported is not None:
        measured = report.get(MEASURED_KEYS.get(reported.metric))
        lines.append(detection_evaluate.reported_line(reported, measured))
    return '\n'.join(lines)


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    eval_options.add_eval_options(parser, example_model='keypointrcnn_resnet50_fpn',
                                  batchsize=1, batchsize_option='--batch-size')
    parser.add_argument('--dataset', default='coco-val2017')
    parser.add_argument('--data-dir', default=None,
                        help="the dataset's root, or the image folder of a json")
    args = parser.parse_args(argv)

    model = detection_evaluate.load_evaluated_model(args.model, args.pretrained_model,
                                                    args.device)
    data = registry.load_keypoint_detection_dataset(
        args.dataset, getattr(model, 'label_names', None), args.data_dir, args.limit)
    evaluator = KeypointDetectionCOCOEvaluator(
        data.dataset, model, label_names=data.label_names, batchsize=args.batch_size,
        with_crowded=True, with_area=True)
    start = time.perf_counter()
    report = evaluator.evaluate()
    seconds = time.perf_counter() - start
    print(detection_evaluate.timing_line(args.model, args.pretrained_model,
                                         len(data.dataset), seconds))
    print(format_report(report, data, detection_evaluate.reported_score(
        args.model, args.pretrained_model)))
    return report


if __name__ == '__main__':
    entry.run(main)
