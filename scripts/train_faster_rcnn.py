"""Train Faster R-CNN (VGG16, or FPN on ResNet-50/101) on VOC07 or a VOC-layout folder.

    python scripts/train_faster_rcnn.py --dataset voc07 --model faster_rcnn_vgg16 \\
        --pretrained-model imagenet
    python scripts/train_faster_rcnn.py --dataset shapes/ --model faster_rcnn_vgg16 \\
        --min-size 128 --max-size 192 --iteration 200 --out result

One image per iteration, as ChainerCV's examples/faster_rcnn: resized as predict() does,
randomly flipped; MomentumSGD (lr 1e-3, weight decay 5e-4, lr x 0.1 at 5/7 of the run).
Writes ``log``, ``loss.png``, snapshots and ``model_final.npz`` to --out and prints the
VOC07 mAP (11-point metric) of the test split.
"""

import argparse
import json
import os
import sys

import numpy

from cvzoo.core.optimizers import MomentumSGD, WeightDecay
from cvzoo.core.training import trainer as trainer_module
from cvzoo.core.training.extensions import (
    fail_on_non_number,
    log_report,
    multistep_shift,
    plot_report,
    print_report,
    snapshot,
)
from cvzoo.core.training.iterators import serial_iterator
from cvzoo.core.training.updaters import standard_updater
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.datasets.voc.voc_detection_splits import voc_detection_splits
from cvzoo.evaluators.detection_evaluators import DetectionVOCEvaluator
from cvzoo.models.detection.faster_rcnn import faster_rcnn_vgg, train_chain
from cvzoo.models.detection.faster_rcnn.fpn import faster_rcnn_fpn_resnet as fpn_models
from cvzoo.models.trained_model import save_trained_model
from cvzoo.transforms.bbox.flip_bbox import flip_bbox
from cvzoo.transforms.bbox.resize_bbox import resize_bbox

MODELS = {'faster_rcnn_vgg16': faster_rcnn_vgg.FasterRCNNVGG16,
          'faster_rcnn_fpn_resnet50': fpn_models.FasterRCNNFPNResNet50,
          'faster_rcnn_fpn_resnet101': fpn_models.FasterRCNNFPNResNet101}
PARTS = {'faster_rcnn_vgg16': ('rpn_loc', 'rpn_cls', 'roi_loc', 'roi_cls')}
FPN_PARTS = ('rpn_loc', 'rpn_conf', 'head_loc', 'head_conf')


class Transform:
    """(img, bbox, label) -> the train chain's (x, bbox, label, scale or size)."""

    def __init__(self, model, seed=0):
        self.model, self.rng = model, numpy.random.RandomState(seed)

    def __call__(self, in_data):
        img, bbox, label = in_data
        x = self.model.prepare(img)
        bbox = resize_bbox(bbox, img.shape[1:], x.shape[1:])
        if self.rng.rand() < 0.5:
            x = x[:, :, ::-1]
            bbox = flip_bbox(bbox, x.shape[1:], x_flip=True)
        size = x.shape[1:]
        x = self.model._stack([numpy.ascontiguousarray(x)])[0]
        extra = size if self.model.pad_stride else x.shape[2] / img.shape[2]
        return x, bbox.astype(numpy.float32), label, extra


def main(argv=None):
    """Train, evaluate on the test split and return the mAP."""
    args = _parser().parse_args(argv)
    numpy.random.seed(args.seed)  # model initialisation and augmentation draw from it
    train, test, label_names = voc_detection_splits(args.dataset)
    model = MODELS[args.model](n_fg_class=len(label_names), pretrained_model=args.pretrained_model,
                               min_size=args.min_size, max_size=args.max_size)
    model.to_device(args.device)
    model.label_names = tuple(label_names)
    fpn = args.model != 'faster_rcnn_vgg16'
    chain = (train_chain.FasterRCNNFPNTrainChain if fpn else train_chain.FasterRCNNTrainChain)(model)
    iterator = serial_iterator.SerialIterator(TransformDataset(train, Transform(model, args.seed)),
                                              1, seed=args.seed)
    optimizer = MomentumSGD(lr=args.lr).setup(chain)
    optimizer.add_hook(WeightDecay(5e-4))
    updater = standard_updater.StandardUpdater(iterator, optimizer, device=args.device)
    trainer = trainer_module.Trainer(updater, (args.iteration, 'iteration'), args.out)
    log_trigger = (max(args.iteration // 50, 1), 'iteration')
    keys = ['main/loss'] + [f'main/loss/{p}' for p in PARTS.get(args.model, FPN_PARTS)]
    trainer.extend(log_report.LogReport(trigger=log_trigger))
    trainer.extend(print_report.PrintReport(['iteration'] + keys + ['elapsed_time']),
                   trigger=log_trigger)
    trainer.extend(plot_report.PlotReport(keys, trigger=log_trigger, filename='loss.png'))
    trainer.extend(multistep_shift.MultistepShift('lr', 0.1, [args.iteration * 5 // 7]))
    trainer.extend(snapshot.snapshot(autoload=args.resume, n_retains=1),
                   trigger=(max(args.iteration // 5, 1), 'iteration'))
    # stops at the first non-finite loss, before that iteration's snapshot
    trainer.extend(fail_on_non_number.FailOnNonNumber(keys=('main/loss',), check_params=False))
    trainer.run()
    save_trained_model(model, os.path.join(args.out, 'model_final.npz'), args.model,
                       n_fg_class=len(label_names), min_size=args.min_size,
                       max_size=args.max_size)
    model.use_preset('evaluate')
    result = DetectionVOCEvaluator(test, model, use_07_metric=True,
                                   label_names=label_names).evaluate()
    print(json.dumps({'map': result['map'], 'elapsed_time': trainer.elapsed_time}))
    return result['map']


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', default='voc07', help="'voc07' or a VOC folder")
    parser.add_argument('--model', choices=sorted(MODELS), default='faster_rcnn_vgg16')
    parser.add_argument('--pretrained-model', default=None, help="'imagenet' or a file")
    parser.add_argument('--min-size', type=int, default=600)
    parser.add_argument('--max-size', type=int, default=1000)
    parser.add_argument('--iteration', type=int, default=70000)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--out', default='result')
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--resume', action='store_true',
                        help='continue from the latest snapshot in --out')
    return parser


if __name__ == '__main__':
    try:
        main()
    except fail_on_non_number.NonFiniteError as exc:
        sys.exit(f'train_faster_rcnn.py: error: {exc}; model_final.npz was not written')
