"""Evaluate an instance segmenter of the zoo: COCO mask AP/AR or VOC mask AP at 0.5, 0.7.

    CVZOO_WEIGHTS_MIRROR=../shared/data/weights python scripts/eval_instance_segmentation.py \
        --model mask_rcnn_fpn_resnet50 --pretrained-model coco --dataset coco-val2017

--dataset is coco-val2017, sbd-val, voc2012-val, or a COCO-format json (its images in
--data-dir; see cvzoo.datasets.registry). The model runs with its 'evaluate' preset.
COCO datasets get the 12 COCO mask numbers (as pycocotools' 'segm'); SBD and VOC get
mask AP at IoU 0.5 and 0.7 (SBD: the 11-point VOC2007 AP, as ChainerCV's FCIS
evaluation; VOC2012: the area; --use-07-metric / --no-use-07-metric overrides).
"""

import argparse
import pathlib
import sys
import time

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.cli import entry, eval_options
from cvzoo.datasets import registry
from cvzoo.evaluators import InstanceSegmentationCOCOEvaluator, InstanceSegmentationVOCEvaluator
from cvzoo.models.detection import evaluate as detection_evaluate
from cvzoo.models.instance_segmentation import evaluate


def build_evaluator(data, model, batchsize, use_07_metric=None):
    """The evaluator of ``data``'s protocol (VOC: at evaluate.VOC_IOU_THRESHS)."""
    if data.protocol == 'voc':
        if use_07_metric is None:
            use_07_metric = data.use_07_metric
        data.use_07_metric = use_07_metric
        return InstanceSegmentationVOCEvaluator(
            data.dataset, model, iou_thresh=evaluate.VOC_IOU_THRESHS,
            use_07_metric=use_07_metric, label_names=data.label_names, batchsize=batchsize)
    return InstanceSegmentationCOCOEvaluator(data.dataset, model, label_names=data.label_names,
                                             batchsize=batchsize, with_crowded=True,
                                             with_area=True)


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    eval_options.add_eval_options(parser, example_model='mask_rcnn_fpn_resnet50', batchsize=1,
                                  batchsize_option='--batch-size')
    parser.add_argument('--dataset', default='coco-val2017')
    parser.add_argument('--data-dir', default=None,
                        help="the dataset's root, or the image folder of a json")
    parser.add_argument('--use-07-metric', action=argparse.BooleanOptionalAction,
                        default=None, help="VOC2007 11-point AP (default: the dataset's)")
    args = parser.parse_args(argv)

    model = detection_evaluate.load_evaluated_model(args.model, args.pretrained_model,
                                                    args.device)
    data = registry.load_instance_segmentation_dataset(
        args.dataset, getattr(model, 'label_names', None), args.data_dir, args.limit)
    evaluator = build_evaluator(data, model, args.batch_size, args.use_07_metric)
    start = time.perf_counter()
    report = evaluator.evaluate()
    seconds = time.perf_counter() - start
    print(detection_evaluate.timing_line(args.model, args.pretrained_model,
                                         len(data.dataset), seconds))
    print(evaluate.format_report(report, data, detection_evaluate.reported_score(
        args.model, args.pretrained_model)))
    return report


if __name__ == '__main__':
    entry.run(main)
