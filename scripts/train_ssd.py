"""Train an SSD on VOC07+12 or on a VOC-layout folder of one's own images.

    python scripts/train_ssd.py --dataset voc07+12 --model ssd300 --pretrained-model imagenet
    python scripts/train_ssd.py --dataset shapes/ --model ssd_tiny --insize 64 \\
        --iteration 1500 --batchsize 16 --optimizer adam --lr 2e-3 --out result

Writes ``log`` (JSON lines), ``loss.png``, snapshots and ``model_final.npz`` to --out and
prints the VOC mAP (11-point metric) of the test split at the end. ``--resume`` continues
from the latest snapshot in --out.
"""

import argparse
import json
import os
import sys

import numpy

from cvzoo.core.communicators import data_parallel
from cvzoo.core.optimizers import Adam, MomentumSGD, WeightDecay
from cvzoo.core.training import trainer as trainer_module
from cvzoo.core.training.extensions import (
    fail_on_non_number,
    log_report,
    multistep_shift,
    observe_lr,
    plot_report,
    print_report,
    snapshot,
)
from cvzoo.core.training.iterators import serial_iterator
from cvzoo.core.training.updaters import standard_updater
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.datasets.voc.voc_detection_splits import voc_detection_splits
from cvzoo.evaluators.detection_evaluators import DetectionVOCEvaluator
from cvzoo.models.detection.ssd import augmentation, ssd, ssd_tiny, train_chain
from cvzoo.models.trained_model import save_trained_model

MODELS = {'ssd300': ssd.SSD300, 'ssd512': ssd.SSD512, 'ssd_tiny': ssd_tiny.SSDTiny}


def _model(args, n_fg_class):
    kwargs = {'insize': args.insize} if args.model == 'ssd_tiny' else {}
    return MODELS[args.model](n_fg_class=n_fg_class, pretrained_model=args.pretrained_model,
                              **kwargs)


def _optimizer(args, chain):
    if args.optimizer == 'adam':
        return Adam(alpha=args.lr).setup(chain)
    optimizer = MomentumSGD(lr=args.lr).setup(chain)
    optimizer.add_hook(WeightDecay(5e-4))
    return optimizer


def main(argv=None):
    """Train, evaluate on the test split and return the mAP."""
    args = _parser().parse_args(argv)
    numpy.random.seed(args.seed)  # model initialisation and augmentation draw from it
    train, test, label_names = voc_detection_splits(args.dataset)
    model = _model(args, len(label_names))
    model.label_names = tuple(label_names)
    chain = train_chain.SSDTrainChain(model)
    optimizer = _optimizer(args, chain)
    comm = None
    if args.communicator != 'none':
        comm, train, optimizer, args.device = data_parallel.setup_data_parallel(
            args.communicator, train, optimizer, args.device, args.seed)
    model.to_device(args.device)
    transform = augmentation.SSDTransform(model.coder, model.insize, model.mean,
                                          max_expand_ratio=args.max_expand_ratio)
    iterator = serial_iterator.SerialIterator(TransformDataset(train, transform),
                                              args.batchsize, seed=args.seed)
    updater = standard_updater.StandardUpdater(iterator, optimizer, device=args.device)
    trainer = trainer_module.Trainer(updater, (args.iteration, 'iteration'), args.out)
    log_trigger = (max(args.iteration // 50, 1), 'iteration')
    if comm is None or comm.rank == 0:
        trainer.extend(log_report.LogReport(trigger=log_trigger))
        trainer.extend(print_report.PrintReport(
            ['iteration', 'main/loss', 'main/loss/loc', 'main/loss/conf', 'elapsed_time']),
            trigger=log_trigger)
        trainer.extend(plot_report.PlotReport(['main/loss', 'main/loss/loc', 'main/loss/conf'],
                                              trigger=log_trigger, filename='loss.png'))
    if args.optimizer == 'sgd':
        steps = [args.iteration * 2 // 3, args.iteration * 5 // 6]
        trainer.extend(multistep_shift.MultistepShift('lr', 0.1, steps))
        trainer.extend(observe_lr.observe_lr(), trigger=log_trigger)
    trainer.extend(snapshot.snapshot(autoload=args.resume, n_retains=1),
                   trigger=(max(args.iteration // 5, 1), 'iteration'))
    # stops at the first non-finite loss, before that iteration's snapshot
    trainer.extend(fail_on_non_number.FailOnNonNumber(keys=('main/loss',), check_params=False))
    trainer.run()
    if comm is not None and comm.rank != 0:
        return None
    # NOTE: the file also holds the class count, names and input size, so that
    # `cvzoo predict IMG --model ssd_tiny --pretrained-model result/model_final.npz` works.
    extra = {'insize': args.insize} if args.model == 'ssd_tiny' else {}
    save_trained_model(model, os.path.join(args.out, 'model_final.npz'), args.model,
                       n_fg_class=len(label_names), **extra)
    model.use_preset('evaluate')
    result = DetectionVOCEvaluator(test, model, use_07_metric=True,
                                   label_names=label_names).evaluate()
    print(json.dumps({'map': result['map'], 'elapsed_time': trainer.elapsed_time}))
    return result['map']


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', default='voc07+12', help="'voc07+12' or a VOC folder")
    parser.add_argument('--model', choices=sorted(MODELS), default='ssd300')
    parser.add_argument('--pretrained-model', default=None, help="'imagenet' or a file")
    parser.add_argument('--insize', type=int, default=96, help='input side (ssd_tiny)')
    parser.add_argument('--batchsize', type=int, default=32)
    parser.add_argument('--iteration', type=int, default=120000)
    parser.add_argument('--optimizer', choices=('sgd', 'adam'), default='sgd')
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--max-expand-ratio', type=float, default=4)
    parser.add_argument('--out', default='result')
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--communicator', default='none', choices=('none', 'mpi', 'nccl'))
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--resume', action='store_true',
                        help='continue from the latest snapshot in --out')
    return parser


if __name__ == '__main__':
    try:
        main()
    except fail_on_non_number.NonFiniteError as exc:
        sys.exit(f'train_ssd.py: error: {exc}; model_final.npz was not written')
