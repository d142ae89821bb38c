"""Train a classifier on a folder of class folders, or on scikit-learn's 8x8 digits.

Single process:      python scripts/train_classifier.py --dataset digits --out result
Several processes:   mpiexec -n 4 python scripts/train_classifier.py --communicator mpi ...
Mixed precision:     python scripts/train_classifier.py --autocast float16 ...

With a communicator, the learning rate is multiplied by the number of processes and
reached by a linear warmup (Goyal et al. 2017, "Accurate, Large Minibatch SGD: Training
ImageNet in 1 Hour"); every run then follows a cosine decay. ``--autocast`` runs the
forward pass under ``cvzoo.core.autocast`` (float32 weights); with float16 a dynamic
``LossScaler`` is on unless ``--no-loss-scaling``.
"""

import argparse
import contextlib
import functools
import sys

import numpy

import cvzoo.core.functions as F
from cvzoo.core import autocast, optimizers
from cvzoo.core.serializers import npz
from cvzoo.core.training import reporter, trainer
from cvzoo.core.training.extensions import (
    cosine_shift,
    evaluator,
    fail_on_non_number,
    log_report,
    observe_lr,
    observe_value,
    plot_report,
    print_report,
    progress_bar,
    snapshot,
)
from cvzoo.core.training.iterators import multiprocess_iterator, serial_iterator
from cvzoo.core.training.updaters import standard_updater
from cvzoo.datasets import registry
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.evaluators import ClassificationEvaluator
from cvzoo.models import zoo


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', default='digits', help="'digits' or a folder of class folders")
    parser.add_argument('--val-dataset', help='folder for validation (default: a 20%% split)')
    parser.add_argument('--model', default='small_cnn', help='a registered classifier')
    parser.add_argument('--pretrained-model', help='zoo key or file; the head is re-made')
    parser.add_argument('--insize', type=int, help='input side of small_cnn (digits: 8)')
    parser.add_argument('--device', default='cpu', help="'cpu' or 'cuda:N'")
    parser.add_argument('--communicator', default='none', choices=('none', 'mpi', 'nccl'))
    parser.add_argument('--batchsize', type=int, default=64, help='per process')
    parser.add_argument('--epoch', type=int, default=10)
    parser.add_argument('--iteration', type=int, help='train this many iterations instead')
    parser.add_argument('--lr', type=float, default=0.05, help='for one process')
    parser.add_argument('--autocast', choices=('bfloat16', 'float16'),
                        help='mixed precision: convolutions and products in this dtype')
    parser.add_argument('--loss-scaling', action=argparse.BooleanOptionalAction,
                        help='dynamic loss scaling (default: on with --autocast float16)')
    parser.add_argument('--warmup-iteration', type=int, default=100)
    parser.add_argument('--loaderjob', type=int, default=0, help='worker processes (0: none)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--out', default='result')
    parser.add_argument('--resume', help='a snapshot to continue from')
    return parser.parse_args(argv)


def _prepared(model, example):
    """(img, label) -> (model.prepare(img), label): what predict() feeds the network."""
    img, label = example
    return model.prepare(img), label


def build_model(args, n_class):
    kwargs = {'insize': args.insize or (8 if args.dataset == 'digits' else 32)} \
        if args.model == 'small_cnn' else {}
    if args.pretrained_model:
        model = zoo.get_model(args.model, pretrained_model=args.pretrained_model, **kwargs)
        model.reset_head(n_class)
        model.label_names = None
    else:
        model = zoo.get_model(args.model, n_class=n_class, **kwargs)
    return model.to_device(args.device)


def make_loss(model, autocast_dtype=None):
    def loss_func(x, t):
        with autocast(autocast_dtype) if autocast_dtype else contextlib.nullcontext():
            y = model(x)
            loss = F.softmax_cross_entropy(y, t)
        reporter.report({'loss': loss, 'accuracy': F.accuracy(y, t)}, model)
        return loss
    return loss_func


def make_communicator(args):
    if args.communicator == 'none':
        return None
    from cvzoo.core.communicators.create_communicator import create_communicator

    comm = create_communicator(args.communicator)
    # this rank's own GPU, current before the model or any array is made
    args.device = str(comm.rank_device(args.device))
    return comm


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    comm = make_communicator(args)
    size, rank = (comm.size, comm.rank) if comm else (1, 0)
    numpy.random.seed(args.seed + rank)
    train, val, label_names = registry.load_classification_training_splits(
        args.dataset, args.val_dataset, args.seed)
    model = build_model(args, len(label_names))
    train = TransformDataset(train, functools.partial(_prepared, model))
    if comm is not None:
        from cvzoo.core.communicators import multi_node_optimizer
        from cvzoo.core.communicators.scatter_dataset import scatter_dataset

        train = scatter_dataset(train, comm, shuffle=True, seed=args.seed)
        val = scatter_dataset(val, comm, force_equal_length=False)
    optimizer = optimizers.MomentumSGD(lr=args.lr * size, momentum=0.9).setup(model)
    optimizer.add_hook(optimizers.WeightDecay(1e-4))
    if args.loss_scaling or (args.loss_scaling is None and args.autocast == 'float16'):
        optimizer.loss_scaler = optimizers.LossScaler()
    if comm is not None:
        optimizer = multi_node_optimizer.create_multi_node_optimizer(optimizer, comm)
    if args.loaderjob > 0:
        iterator = multiprocess_iterator.MultiprocessIterator(
            train, args.batchsize, n_processes=args.loaderjob, seed=args.seed)
    else:
        iterator = serial_iterator.SerialIterator(train, args.batchsize, seed=args.seed)
    updater = standard_updater.StandardUpdater(iterator, optimizer, device=args.device,
                                               loss_func=make_loss(model, args.autocast))
    iterations_per_epoch = -(-len(train) // args.batchsize)
    n_iteration = args.iteration or args.epoch * iterations_per_epoch
    stop = (args.iteration, 'iteration') if args.iteration else (args.epoch, 'epoch')
    run = trainer.Trainer(updater, stop, out=args.out)
    warmup = min(args.warmup_iteration, n_iteration // 2) if size > 1 else 0
    run.extend(cosine_shift.CosineShift('lr', n_iteration, init=args.lr * size,
                                        warmup_iter=warmup, warmup_start=args.lr))
    add_reporting(run, args, model, val, label_names, comm, n_iteration)
    if args.resume:
        npz.load_npz(args.resume, run)
    run.run()
    result = run.get_extension('validation').evaluate()
    if rank == 0:
        npz.save_npz(f'{args.out}/model.npz', model)
        print(f"validation top1 {result['validation/main/top1']:.4f}")
    return result


def add_reporting(run, args, model, val, label_names, comm, n_iteration):
    interval = (1, 'epoch') if not args.iteration else (max(1, args.iteration // 5), 'iteration')
    check = ClassificationEvaluator(val, model, label_names=label_names, batchsize=256,
                                    quiet=True)
    if comm is not None:
        from cvzoo.core.communicators import multi_node_evaluator

        check = multi_node_evaluator.create_multi_node_evaluator(check, comm)
    run.extend(evaluator.Evaluator(check), trigger=interval)
    run.extend(observe_lr.observe_lr())
    scaler = run.updater.get_optimizer('main').loss_scaler
    if scaler is not None:
        run.extend(observe_value.observe_value('loss_scale', lambda _: scaler.loss_scale))
    run.extend(fail_on_non_number.FailOnNonNumber(keys=('main/loss',), check_params=False))
    if comm is not None and comm.rank != 0:
        return
    run.extend(log_report.LogReport(trigger=interval))
    run.extend(print_report.PrintReport(
        ['epoch', 'iteration', 'main/loss', 'main/accuracy', 'validation/main/top1', 'lr',
         'elapsed_time']))
    run.extend(progress_bar.ProgressBar(update_interval=10))
    run.extend(plot_report.PlotReport(['main/loss'], trigger=interval, filename='loss.png'))
    run.extend(plot_report.PlotReport(['main/accuracy', 'validation/main/top1'],
                                      trigger=interval, filename='accuracy.png'))
    run.extend(snapshot.snapshot(n_retains=2), trigger=interval)


if __name__ == '__main__':
    try:
        main()
    except fail_on_non_number.NonFiniteError as exc:
        sys.exit(f'train_classifier.py: error: {exc}; model.npz was not written')
