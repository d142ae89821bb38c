"""train(): any registered model, on a dataset of its task, through its family's recipe.

The one trainer above ``models/``. The model declares how it trains
(``model.training_recipe(seed=..., augment=...)``, a
:class:`~cvzoo.core.training.recipe.TrainingRecipe`); this module runs it the same way
for every task: the dataset through the recipe's transform, data-parallel under a
communicator, the recipe's schedule with its warm-up, the log, the printed progress
with its ETA, the evaluation of a validation set with the task's evaluator
(:mod:`cvzoo.training.evaluation`), ``loss.png`` and ``metric.png``, snapshots to
resume from, a stop at the first non-finite loss, and ``model_final.npz``, which
``get_model(name, pretrained_model=...)`` and ``cvzoo predict`` rebuild alone.
"""

import dataclasses
import math
import os

import numpy

from cvzoo import errors
from cvzoo.core import autocast as autocast_context
from cvzoo.core import backend, device_random, optimizers
from cvzoo.core.communicators.data_parallel import COMMUNICATORS
from cvzoo.core.mixed_precision import AUTOCAST_DTYPES
from cvzoo.core.serializers import npz
from cvzoo.core.training import extension, iterators, triggers, updaters
from cvzoo.core.training import trainer as trainer_module
from cvzoo.core.training.extensions import (
    Evaluator,
    FailOnNonNumber,
    LogReport,
    PlotReport,
    PrintReport,
    ProgressBar,
    observe_value,
    snapshot,
)
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.models.weights.trained_model import save_trained_model
from cvzoo.training import class_ids, evaluation, schedule

# the tasks whose models count their classes without the background
FG_CLASS_TASKS = ('detection', 'instance_segmentation', 'keypoint_detection')
EVALUATIONS_PER_RUN = 5
LOG_LINES_PER_RUN = 50
SNAPSHOTS_PER_RUN = 5


@dataclasses.dataclass
class TrainingResult:
    """What :func:`train` returns.

    Attributes:
        trainer (Trainer): the finished trainer (its ``out``, extensions, updater).
        metrics (dict): the last evaluation's report (``validation/main/...`` keys; empty
            without a validation set).
        elapsed_time (float or None): seconds of training on rank 0, None on the others.
    """

    trainer: trainer_module.Trainer
    metrics: dict
    elapsed_time: float | None


def train(model, train_dataset, task, label_names, out='result', val_dataset=None,
          recipe=None, iterations=None, epochs=None, batchsize=None, lr=None, device='cpu',
          communicator='none', seed=0, resume=False, model_name=None, model_kwargs=None,
          cuda_graph=False, autocast=None, loss_scaling=None, evaluate_every=None,
          progress=True):
    """Train ``model`` on ``train_dataset`` and write ``out/model_final.npz``.

    Args:
        model: a registered model (on the host; moved to ``device`` here with its train
            chain), with ``len(label_names)`` classes.
        train_dataset: examples of ``task``'s layout (DESIGN.md: e.g. ``img, label`` for
            classification, ``img, bbox, label`` for detection).
        task (str): the model's task (``model_info(name)['task']``).
        label_names (sequence of str): the classes; set on the model and saved with it.
        out (str): the folder of ``log``, ``loss.png``, ``metric.png``, the snapshots and
            ``model_final.npz``.
        val_dataset: examples of the same layout, evaluated every ``evaluate_every``
            iterations and at the end (None: no evaluation).
        recipe (TrainingRecipe or None): None: ``model.training_recipe(seed=seed)``.
        iterations (int or None): the length of the run.
        epochs (int or None): instead of ``iterations``: epochs of this process's share
            of the data. Neither: the recipe's ``iterations``.
        batchsize (int or None): examples per iteration and process (None: the
            recipe's).
        lr (float or None): the peak learning rate (Adam: its ``alpha``) for one process;
            None: ``recipe.lr_for(batchsize)``. Under a communicator it is multiplied by
            the number of processes when the recipe scales its rate (``scale_lr``), as
            the total batch grows (Goyal et al. 2017).
        device (str): ``'cpu'`` or ``'cuda:N'`` (under a communicator: each process's
            own GPU).
        communicator (str): ``'none'``, ``'mpi'`` or ``'nccl'``: data-parallel over the
            processes of ``mpiexec``; rank 0 alone logs, snapshots and writes the model.
        seed (int): of the recipe's transform, the iterator's shuffles, the data split
            between processes and NumPy's global generator (dropout).
        resume (bool): continue from the newest snapshot in ``out``.
        model_name (str or None): the registry name saved with the weights (None: a
            model the registry cannot rebuild; the file is then read as weights only).
        model_kwargs (dict or None): further constructor arguments saved with them
            (the class count, ``n_class`` or ``n_fg_class``, is always saved).
        cuda_graph (bool): capture the training step as a CUDA graph (a GPU ``device``).
        autocast (str or None): ``'float16'`` or ``'bfloat16'``: the forward pass under
            ``cvzoo.core.autocast`` (float32 weights).
        loss_scaling (bool or None): dynamic loss scaling; None: on with float16.
        evaluate_every (int or None): iterations between evaluations of
            ``val_dataset`` (None: about 5 per run); the last iteration always evaluates.
        progress (bool): print the report lines and a progress bar with the ETA.

    Returns:
        TrainingResult: ``trainer``, ``metrics`` and ``elapsed_time``.

    Raises:
        cvzoo.errors.UsageError: an argument out of its range (named), a model without
            a recipe, or a batch larger than the training set.
        NonFiniteError: a non-finite loss; ``model_final.npz`` is then not written.
    """
    _check_arguments(task, label_names, iterations, epochs, batchsize, lr, communicator,
                     autocast, evaluate_every, cuda_graph, device)
    _check_class_count(model, task, label_names)
    if recipe is None:
        recipe = _recipe_of(model, seed)
    batchsize = recipe.batchsize if batchsize is None else batchsize
    if batchsize > len(train_dataset):
        raise errors.UsageError(f'batchsize: {batchsize} is larger than the training set '
                                f'({len(train_dataset)} examples)')
    model.label_names = tuple(label_names)
    comm, device = _communicator(communicator, device)
    size, rank = (comm.size, comm.rank) if comm is not None else (1, 0)
    numpy.random.seed(seed + rank)
    device_random.seed(seed + rank)  # dropout's masks on a GPU
    dataset = TransformDataset(
        class_ids.CheckedClassIds(train_dataset, task, len(label_names)), recipe.transform)
    if comm is not None:
        from cvzoo.core.communicators.scatter_dataset import scatter_dataset

        dataset = scatter_dataset(dataset, comm, shuffle=True, seed=seed)
    n_iteration = _run_length(recipe, iterations, epochs, len(dataset), batchsize)
    peak_lr = run_lr(recipe, lr, batchsize, size)
    optimizer = _optimizer(recipe, peak_lr, autocast, loss_scaling, comm)
    recipe.train_chain.to_device(device)
    updater = updaters.StandardUpdater(
        iterators.SerialIterator(dataset, batchsize, seed=seed), optimizer,
        converter=recipe.converter, device=device,
        loss_func=_under_autocast(recipe.train_chain, autocast), cuda_graph=cuda_graph)
    trainer = trainer_module.Trainer(updater, (n_iteration, 'iteration'), out)
    lr_shift = schedule.make_schedule(recipe, peak_lr, n_iteration)
    if lr_shift is not None:
        trainer.extend(lr_shift, name='lr_schedule')
    trainer.extend(FailOnNonNumber(keys=('main/loss',), check_params=False))
    validation = None
    if val_dataset is not None:
        every = evaluate_every or _share(n_iteration, EVALUATIONS_PER_RUN)
        validation = _add_evaluation(trainer, task, model, val_dataset, label_names, comm,
                                     _every(every, n_iteration))
    _keep_transform_state(trainer, recipe.transform)
    if rank == 0:
        _add_reports(trainer, recipe, task, optimizer, n_iteration, validation is not None,
                     progress)
    # NOTE: uncompressed: zlib gains little on float weights and took 50 s a snapshot of
    # a ResNet-50 segmenter on a CPU
    trainer.extend(snapshot(savefun=_save_uncompressed, autoload=resume, n_retains=1,
                            condition=lambda: rank == 0),
                   trigger=_every(_share(n_iteration, SNAPSHOTS_PER_RUN), n_iteration))
    trainer.run()
    metrics = dict(validation.result) if validation is not None else {}
    if rank != 0:
        return TrainingResult(trainer, metrics, None)
    kwargs = {_class_count_key(task): len(label_names), **(model_kwargs or {})}
    save_trained_model(model, os.path.join(out, 'model_final.npz'), model_name, **kwargs)
    return TrainingResult(trainer, metrics, trainer.elapsed_time)


def run_lr(recipe, lr, batchsize, n_process):
    """The peak learning rate of a run: ``lr`` (None: the recipe's for ``batchsize``),
    times the number of processes when the recipe scales its rate with the batch.

    >>> from types import SimpleNamespace
    >>> recipe = SimpleNamespace(scale_lr=True, lr_for=lambda batchsize: 0.1 * batchsize / 256)
    >>> run_lr(recipe, None, 32, 8), run_lr(recipe, 0.01, 32, 2)
    (0.1, 0.02)
    """
    base = recipe.lr_for(batchsize) if lr is None else lr
    return base * n_process if recipe.scale_lr else base


def _check_arguments(task, label_names, iterations, epochs, batchsize, lr, communicator,
                     autocast, evaluate_every, cuda_graph, device):
    evaluation.task_evaluation(task)
    if label_names is None or len(label_names) == 0:
        raise errors.UsageError(f'label_names: expected the names of the classes, got '
                                f'{label_names!r}')
    if iterations is not None and epochs is not None:
        raise errors.UsageError(f'iterations, epochs: give one of them, got iterations='
                                f'{iterations} and epochs={epochs}')
    for name, value in (('iterations', iterations), ('epochs', epochs),
                        ('batchsize', batchsize), ('evaluate_every', evaluate_every)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise errors.UsageError(f'{name}: expected a whole number >= 1, got {value!r}')
    if lr is not None and not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise errors.UsageError(f'lr: expected a finite number > 0, got {lr!r}')
    if communicator not in COMMUNICATORS:
        raise errors.UsageError(f'communicator: expected one of {COMMUNICATORS}, got '
                                f'{communicator!r}')
    if autocast is not None and autocast not in AUTOCAST_DTYPES:
        raise errors.UsageError(f'autocast: expected None or one of {AUTOCAST_DTYPES}, got '
                                f'{autocast!r}')
    if cuda_graph and backend.get_device(device).kind != 'cuda':
        raise errors.UsageError(f'cuda_graph: CUDA graphs need a GPU device (cuda:N), got '
                                f'device={device!r}')


def _check_class_count(model, task, label_names):
    """Refuse label names that do not match the model's classes: the saved model would
    not rebuild (its class count is saved from the names)."""
    n_class = _model_class_count(model, task)
    if n_class is not None and n_class != len(label_names):
        raise errors.UsageError(
            f'label_names: {len(label_names)} names for a {type(model).__name__} of {n_class} '
            f'classes ({_class_count_key(task)}={n_class}); build the model with '
            f'{_class_count_key(task)}={len(label_names)}')


def _model_class_count(model, task):
    """The classes ``model`` predicts (``n_fg_class``, ``n_class``, or a classifier's
    head's outputs), or None when it does not say."""
    n_class = getattr(model, _class_count_key(task), None)
    if n_class is None and task == 'classification':
        head = getattr(model, getattr(model, 'head_name', ''), None)
        n_class = getattr(head, 'out_size', None)
    return n_class


def _recipe_of(model, seed):
    declare = getattr(model, 'training_recipe', None)
    if declare is None:
        raise errors.UsageError(f'model: {type(model).__name__} declares no training_recipe(); '
                                "pass recipe= or declare one on its family's base class")
    return declare(seed=seed)


def _communicator(name, device):
    """(communicator or None, this process's device)."""
    if name == 'none':
        return None, device
    from cvzoo.core.communicators.data_parallel import create_rank_communicator

    return create_rank_communicator(name, device)


def _run_length(recipe, iterations, epochs, n_examples, batchsize):
    if iterations is not None:
        return iterations
    if epochs is not None:
        return epochs * -(-n_examples // batchsize)
    return recipe.iterations


def _optimizer(recipe, lr, autocast, loss_scaling, comm):
    optimizer = recipe.make_optimizer(lr)
    if loss_scaling or (loss_scaling is None and autocast == 'float16'):
        optimizer.loss_scaler = optimizers.LossScaler()
    if comm is not None:
        from cvzoo.core.communicators import multi_node_optimizer

        optimizer = multi_node_optimizer.create_multi_node_optimizer(optimizer, comm)
    return optimizer


def _under_autocast(chain, dtype):
    """The updater's loss function: ``chain`` with its forward pass under
    ``autocast(dtype)``, or None (the optimizer's target) without autocast."""
    if dtype is None:
        return None

    def loss_func(*args, **kwargs):
        with autocast_context(dtype):
            return chain(*args, **kwargs)
    return loss_func


def _share(n_iteration, count):
    """Iterations between ``count`` events spread over the run."""
    return max(n_iteration // count, 1)


def _every(interval, n_iteration):
    """A trigger firing every ``interval`` iterations and at the last one."""
    points = set(range(interval, n_iteration + 1, interval)) | {n_iteration}
    return triggers.ManualScheduleTrigger(sorted(points), 'iteration')


class _LastResult:
    """An evaluator that keeps its last report (the run's ``metrics``)."""

    def __init__(self, evaluator):
        self.evaluator = evaluator
        self.result = {}

    def evaluate(self):
        self.result = self.evaluator.evaluate()
        return self.result


def _add_evaluation(trainer, task, model, val_dataset, label_names, comm, trigger):
    if comm is not None:
        from cvzoo.core.communicators import multi_node_evaluator
        from cvzoo.core.communicators.scatter_dataset import scatter_dataset

        val_dataset = scatter_dataset(val_dataset, comm, force_equal_length=False)
    evaluator = evaluation.make_evaluator(task, model, val_dataset, label_names)
    if comm is not None:
        evaluator = multi_node_evaluator.create_multi_node_evaluator(evaluator, comm)
    validation = _LastResult(evaluator)
    # the keys already read validation/main/...
    trainer.extend(Evaluator(validation, prefix=''), name='validation', trigger=trigger)
    return validation


def _add_reports(trainer, recipe, task, optimizer, n_iteration, with_validation, progress):
    log_trigger = _every(_share(n_iteration, LOG_LINES_PER_RUN), n_iteration)
    attr = schedule.rate_attribute(recipe)
    trainer.extend(observe_value('lr', lambda _: getattr(optimizer, attr)), name='observe_lr')
    scaler = getattr(optimizer, 'loss_scaler', None)
    if scaler is not None:
        trainer.extend(observe_value('loss_scale', lambda _: scaler.loss_scale),
                       name='observe_loss_scale')
    metrics = evaluation.plotted_metrics(task, with_validation)
    trainer.extend(LogReport(trigger=log_trigger))
    trainer.extend(PlotReport(list(recipe.loss_keys), trigger=log_trigger,
                              filename='loss.png'))
    if metrics:
        trainer.extend(PlotReport(metrics, trigger=log_trigger, filename='metric.png'),
                       name='PlotReport_metric')
    if progress:
        trainer.extend(PrintReport(['epoch', 'iteration'] + list(recipe.loss_keys) + metrics
                                   + ['lr', 'elapsed_time']), trigger=log_trigger)
        trainer.extend(ProgressBar(update_interval=_share(n_iteration, 100)))


class _TransformRandomState(extension.Extension):
    """Keeps the transform's own generator in the snapshots, so that a resumed run draws
    the augmentation an uninterrupted one would have drawn; it runs at no iteration."""

    name = 'transform_random_state'
    priority = extension.PRIORITY_READER

    def __init__(self, rng):
        self.rng = rng

    def __call__(self, trainer):
        pass

    def serialize(self, serializer):
        trainer_module.serialize_random_state(serializer, self.rng)


def _keep_transform_state(trainer, transform):
    rng = getattr(transform, 'rng', None)
    if isinstance(rng, numpy.random.RandomState):
        trainer.extend(_TransformRandomState(rng), trigger=_never)


def _save_uncompressed(path, target):
    npz.save_npz(path, target, compression=False)


def _never(trainer):
    return False


def _class_count_key(task):
    """The constructor argument of the class count: ``n_fg_class`` for the tasks that
    count without the background, ``n_class`` otherwise."""
    return 'n_fg_class' if task in FG_CLASS_TASKS else 'n_class'
