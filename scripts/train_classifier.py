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
import functools

import numpy

import cvzoo.core.links as L
from cvzoo.cli import argument_types, entry, train_options
from cvzoo.core import autocast, device_random, optimizers, training
from cvzoo.core.serializers import npz
from cvzoo.core.training import extensions
from cvzoo.datasets import registry
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.evaluators import ClassificationEvaluator
from cvzoo.models import zoo


def parse_args(argv):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', default='digits',
                        help="'digits' or a folder of class folders")
    parser.add_argument('--val-dataset', help='folder for validation (default: a 20%% split)')
    parser.add_argument('--model', default='small_cnn', help='a registered classifier')
    parser.add_argument('--pretrained-model', help='zoo key or file; the head is re-made')
    parser.add_argument('--insize', type=argument_types.positive_int,
                        help='input side of small_cnn (digits: 8)')
    parser.add_argument('--epoch', type=argument_types.positive_int, default=10,
                        help='used without --iteration')
    parser.add_argument('--warmup-iteration', type=argument_types.non_negative_int,
                        default=100)
    parser.add_argument('--loaderjob', type=argument_types.non_negative_int, default=0,
                        help='worker processes (0: none)')
    parser.add_argument('--resume', type=argument_types.existing_file,
                        help='a snapshot to continue from')
    train_options.add_train_options(parser, batchsize=64, iteration=None, lr=0.05,
                                    lr_help='for one process', resume_flag=False)
    parser.add_argument('--autocast', choices=('bfloat16', 'float16'),
                        help='mixed precision: convolutions and products in this dtype')
    parser.add_argument('--loss-scaling', action=argparse.BooleanOptionalAction,
                        help='dynamic loss scaling (default: on with --autocast float16)')
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


def under_autocast(classifier, dtype):
    """The loss function of the updater: ``classifier`` with its forward pass under
    ``autocast(dtype)`` (the loss itself stays float32), or ``classifier`` for None."""
    if dtype is None:
        return classifier

    def loss_func(*batch):
        with autocast(dtype):
            return classifier(*batch)
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
    args = parse_args(argv)
    comm = make_communicator(args)
    size, rank = (comm.size, comm.rank) if comm else (1, 0)
    train_options.check_cuda_graph(args.cuda_graph, args.device)
    numpy.random.seed(args.seed + rank)
    device_random.seed(args.seed + rank)  # dropout's masks on a GPU
    train, val, label_names = registry.load_classification_training_splits(
        args.dataset, args.val_dataset, args.seed)
    train_options.check_batchsize(args.batchsize, len(train), args.dataset)
    model = build_model(args, len(label_names))
    train = TransformDataset(train, functools.partial(_prepared, model))
    if comm is not None:
        from cvzoo.core.communicators import multi_node_optimizer
        from cvzoo.core.communicators.scatter_dataset import scatter_dataset

        train = scatter_dataset(train, comm, shuffle=True, seed=args.seed)
        val = scatter_dataset(val, comm, force_equal_length=False)
    # reports main/loss and main/accuracy; its parameters are the model's
    classifier = L.Classifier(model)
    optimizer = optimizers.MomentumSGD(lr=args.lr * size, momentum=0.9).setup(classifier)
    optimizer.add_hook(optimizers.WeightDecay(1e-4))
    if args.loss_scaling or (args.loss_scaling is None and args.autocast == 'float16'):
        optimizer.loss_scaler = optimizers.LossScaler()
    if comm is not None:
        optimizer = multi_node_optimizer.create_multi_node_optimizer(optimizer, comm)
    if args.loaderjob > 0:
        iterator = training.iterators.MultiprocessIterator(
            train, args.batchsize, n_processes=args.loaderjob, seed=args.seed)
    else:
        iterator = training.iterators.SerialIterator(train, args.batchsize, seed=args.seed)
    updater = training.updaters.StandardUpdater(
        iterator, optimizer, device=args.device,
        loss_func=under_autocast(classifier, args.autocast), cuda_graph=args.cuda_graph)
    iterations_per_epoch = -(-len(train) // args.batchsize)
    n_iteration = args.iteration or args.epoch * iterations_per_epoch
    stop = (args.iteration, 'iteration') if args.iteration else (args.epoch, 'epoch')
    run = training.Trainer(updater, stop, out=args.out)
    warmup = min(args.warmup_iteration, n_iteration // 2) if size > 1 else 0
    run.extend(extensions.CosineShift('lr', n_iteration, init=args.lr * size,
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
    run.extend(extensions.Evaluator(check), trigger=interval)
    run.extend(extensions.observe_lr())
    scaler = run.updater.get_optimizer('main').loss_scaler
    if scaler is not None:
        run.extend(extensions.observe_value('loss_scale', lambda _: scaler.loss_scale))
    run.extend(extensions.FailOnNonNumber(keys=('main/loss',), check_params=False))
    if comm is not None and comm.rank != 0:
        return
    run.extend(extensions.LogReport(trigger=interval))
    run.extend(extensions.PrintReport(
        ['epoch', 'iteration', 'main/loss', 'main/accuracy', 'validation/main/top1', 'lr',
         'elapsed_time']))
    run.extend(extensions.ProgressBar(update_interval=10))
    run.extend(extensions.PlotReport(['main/loss'], trigger=interval, filename='loss.png'))
    run.extend(extensions.PlotReport(['main/accuracy', 'validation/main/top1'],
                                     trigger=interval, filename='accuracy.png'))
    run.extend(extensions.snapshot(n_retains=2), trigger=interval)


if __name__ == '__main__':
    train_options.run(main, 'model.npz')
