"""The trainer wiring of ``scripts/train_ssd.py``, ``train_yolo.py`` and ``train_faster_rcnn.py``.

A script builds what is its own (the model, its train chain and optimizer, the dataset
through ``cvzoo.datasets.registry`` and its augmentation) and calls :func:`train_detector`,
which runs data-parallel under a communicator, iterates, reports, shifts the learning
rate, snapshots, resumes and writes ``model_final.npz``. The evaluation on the test split
stays in the script: models may not import evaluators (DESIGN.md).
"""

import math
import os

from cvzoo.core import device_random
from cvzoo.core.communicators import data_parallel
from cvzoo.core.training import convert
from cvzoo.core.training import trainer as trainer_module
from cvzoo.core.training.extensions import (
    log_report,
    multistep_shift,
    plot_report,
    print_report,
    snapshots,
    value_observation,
)
from cvzoo.core.training.iterators import serial_iterator
from cvzoo.core.training.updaters import standard_updater
from cvzoo.models.weights.trained_model import save_trained_model


def train_detector(model, optimizer, dataset, label_names, *, out, batchsize,
                   loss_keys, guard, iteration=None, epoch=None, lr_steps=(),
                   converter=convert.concat_examples, device='cpu', communicator='none',
                   seed=0, resume=False, model_name=None, model_kwargs=None,
                   warmup_iter=0, warmup_start_ratio=1 / 3, cuda_graph=False):
    """Train ``model`` and write ``out/model_final.npz``.

    Args:
        model (Detector): the model, on the host; moved to ``device`` here with the train
            chain around it (``optimizer.target``), after the communicator chose this
            rank's device.
        optimizer: set up on the model's train chain.
        dataset: the training examples as the train chain takes them (the dataset
            through its augmentation, e.g. ``TransformDataset(train, SSDTransform(...))``).
        label_names (sequence of str): the classes, set on the model and saved with it.
        out (str): folder of ``log``, ``loss.png``, the snapshots and the final model.
        batchsize (int): examples per iteration (per process under a communicator).
        loss_keys (sequence of str): the reported losses printed and plotted
            (``'main/loss'`` first).
        guard: the extension that stops the run at a non-finite loss, before that
            iteration's snapshot (the scripts pass ``FailOnNonNumber``).
        iteration (int or None): length of the run; None: ``epoch`` epochs of this
            process's share of ``dataset``.
        epoch (int or None): used when ``iteration`` is None.
        lr_steps (sequence of fractions.Fraction): where the learning rate is multiplied
            by 0.1, as fractions of the run; with steps or a warm-up, ``lr`` is logged
            and printed.
        converter (callable): the updater's batch converter.
        device (str): ``'cpu'`` or ``'cuda:N'``.
        communicator (str): ``'none'``, ``'mpi'`` or ``'nccl'``: data-parallel over the
            processes of ``mpiexec``; only rank 0 reports and writes the final model.
        seed (int): of the iterator's shuffles and the data-parallel split.
        resume (bool): continue from the latest snapshot in ``out``.
        model_name (str or None): the registry name saved with the weights, so that
            ``get_model(model_name, pretrained_model=...)`` rebuilds the model; None
            for a model the registry cannot rebuild (one built from a Darknet cfg).
            Either way the file records the label names and the model's
            ``box_convention``, which loading the file restores (see
            :mod:`cvzoo.models.weights.trained_model`).
        model_kwargs (dict or None): further constructor arguments saved with the
            weights (``n_fg_class`` is always saved).
        warmup_iter (int): iterations over which the learning rate rises linearly from
            ``warmup_start_ratio`` times its value (0: no warm-up; see
            :class:`~cvzoo.core.training.extensions.multistep_shift.MultistepShift`).
        warmup_start_ratio (float): the rate's factor at the first iteration.
        cuda_graph (bool): capture the training step as a CUDA graph after warm-up
            (:mod:`cvzoo.core.cuda_graph`); a train chain that cannot be captured warns
            once and trains eagerly.

    Returns:
        Trainer or None: the finished trainer (for its ``elapsed_time``) on rank 0,
        None on the other ranks.

    Raises:
        NonFiniteError: from ``guard``; ``model_final.npz`` is then not written.
    """
    model.label_names = tuple(label_names)
    device_random.seed(seed)  # dropout's masks on a GPU
    comm = None
    if communicator != 'none':
        comm, dataset, optimizer, device = data_parallel.setup_data_parallel(
            communicator, dataset, optimizer, device, seed)
    # NOTE: the whole train chain moves, not only the model inside it: a chain builds its
    # targets with its own array module
    optimizer.target.to_device(device)
    iterator = serial_iterator.SerialIterator(dataset, batchsize, seed=seed)
    updater = standard_updater.StandardUpdater(iterator, optimizer, converter=converter,
                                               device=device, cuda_graph=cuda_graph)
    n_iteration = iteration or epoch * -(-len(dataset) // batchsize)
    trainer = trainer_module.Trainer(updater, (n_iteration, 'iteration'), out)
    log_trigger = (max(n_iteration // 50, 1), 'iteration')
    scheduled = bool(lr_steps) or warmup_iter > 0
    if scheduled:
        trainer.extend(multistep_shift.MultistepShift(
            'lr', 0.1, [math.floor(n_iteration * step) for step in lr_steps],
            warmup_iter=warmup_iter, warmup_start_ratio=warmup_start_ratio))
    if comm is None or comm.rank == 0:
        shown = list(loss_keys)
        if scheduled:
            trainer.extend(value_observation.observe_lr(), trigger=log_trigger)
            shown.append('lr')
        trainer.extend(log_report.LogReport(trigger=log_trigger))
        trainer.extend(print_report.PrintReport(['iteration'] + shown + ['elapsed_time']),
                       trigger=log_trigger)
        trainer.extend(plot_report.PlotReport(list(loss_keys), trigger=log_trigger,
                                              filename='loss.png'))
    trainer.extend(snapshots.snapshot(autoload=resume, n_retains=1),
                   trigger=(max(n_iteration // 5, 1), 'iteration'))
    trainer.extend(guard)
    trainer.run()
    if comm is not None and comm.rank != 0:
        return None
    save_trained_model(model, os.path.join(out, 'model_final.npz'), model_name,
                       n_fg_class=len(label_names), **(model_kwargs or {}))
    return trainer
