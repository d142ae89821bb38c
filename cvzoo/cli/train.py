"""``cvzoo train``: train a registered model on a dataset of one's own, for any task.

    cvzoo train MODEL --data PATH [--format auto|class_folders|voc|coco|yolo|
                segmentation_folders|coco_instances|coco_keypoints] [--task TASK]
                [--pretrained-model KEY|FILE|none] [--val PATH | --val-fraction F]
                [--iterations N | --epochs N] [--batchsize B] [--lr LR]
                [--optimizer momentum_sgd|sgd|adam] [--device D]
                [--communicator none|mpi|nccl] [--out DIR] [--resume] [--seed S]
                [--cuda-graph] [--dtype float32|bfloat16|float16] [--[no-]loss-scaling]
                [--no-augment] [--insize S] [--min-size S --max-size S]

The data's format is recognised (``cvzoo.datasets.formats``), the model is built for the
data's classes (from a zoo key its head is re-made, the rest fine-tuned), and
``cvzoo.training.train`` runs the model's own recipe (``model.training_recipe``). It
prints the losses with an ETA, evaluates the held-out set with the task's metric, and
writes ``model_final.npz`` to ``--out``, which ``cvzoo predict`` and ``get_model`` rebuild
alone. The ``scripts/train_*.py`` programs are this command with their former flags
(:func:`add_arguments` with a fixed model family).
"""

import dataclasses
import inspect
import json
import os

import numpy

from cvzoo import errors
from cvzoo import models as zoo_api
from cvzoo.cli import argument_types, train_options
from cvzoo.core.training import recipe as recipe_module
from cvzoo.datasets.formats.format_detection import FORMAT_TASKS, FORMATS
from cvzoo.models import registry
from cvzoo.models.weights import trained_model

# datasets of cvzoo.datasets.registry that --data also names (the train scripts' defaults)
NAMED_DATA = {'digits': 'classification', 'voc07': 'detection', 'voc07+12': 'detection'}
# constructor options of the command: (flag, the constructor's argument)
MODEL_OPTIONS = (('--insize', 'insize'), ('--min-size', 'min_size'), ('--max-size', 'max_size'))


def add_parser(subparsers):
    """Register the ``train`` subcommand on ``subparsers`` (argparse's)."""
    parser = subparsers.add_parser(
        'train', help='train a model on your own data (a folder per class, VOC, COCO, YOLO, '
        'segmentation folders, COCO instances or keypoints); docs/training.md',
        description='Train a registered model on a dataset of your own, for any task.')
    parser.add_argument('model', help='registry name, e.g. small_cnn, ssd_tiny, resnet50 '
                        '(see `cvzoo models`)')
    add_arguments(parser)
    return parser


def add_arguments(parser, *, data_flags=('--data',), val_flags=('--val',), data_default=None,
                  pretrained='none', batchsize=None, iterations=None, epochs=None, lr=None):
    """Add the options of ``cvzoo train`` (all but MODEL) to ``parser``.

    Args:
        parser (argparse.ArgumentParser): the command's or a train script's parser.
        data_flags (tuple of str): the option strings of the data (a script also takes
            its former ``--dataset``).
        val_flags (tuple of str): those of the held-out data.
        data_default (str or None): None: the data option is required.
        pretrained (str): the default of ``--pretrained-model``.
        batchsize, iterations, epochs, lr: defaults (None: the model's recipe says).
    """
    parser.set_defaults(data_option=data_flags[0])
    parser.add_argument(*data_flags, dest='data', required=data_default is None,
                        default=data_default, metavar='PATH',
                        help='the training data: a folder or a json (see --format)' +
                        (f' or one of {sorted(NAMED_DATA)}' if data_default else ''))
    parser.add_argument('--format', choices=('auto',) + FORMATS, default='auto',
                        help='how the data is laid out (default: recognised)')
    parser.add_argument('--task', choices=registry.TASKS, default=None,
                        help="the data's task (default: the model's)")
    parser.add_argument('--pretrained-model', default=pretrained, metavar='KEY|FILE|none',
                        help="a weight key of the model (its head is re-made for the data's "
                        "classes), a file, or 'none' (random weights)")
    held_out = parser.add_mutually_exclusive_group()
    held_out.add_argument(*val_flags, dest='val', metavar='PATH', default=None,
                          help='held-out data in the same format (default: --val-fraction '
                          'of --data, unless it has its own validation split)')
    held_out.add_argument('--val-fraction', metavar='F',
                          type=argument_types.finite_float(0, 1, high_open=True),
                          default=0.2, help='the share of --data held out to evaluate on '
                          '(0: no evaluation)')
    length = parser.add_mutually_exclusive_group()
    length.add_argument('--iterations', '--iteration', dest='iterations', metavar='N',
                        type=argument_types.positive_int, default=iterations,
                        help="length of the run in iterations (default: the recipe's)")
    length.add_argument('--epochs', '--epoch', dest='epochs', metavar='N',
                        type=argument_types.positive_int, default=epochs,
                        help='length of the run in passes over the data')
    parser.add_argument('--batchsize', metavar='B', type=argument_types.positive_int,
                        default=batchsize,
                        help="examples per iteration, per process (default: the recipe's, "
                        'at most the training set)')
    parser.add_argument('--lr', type=argument_types.positive_float, default=lr,
                        help="learning rate (default: the recipe's, scaled to --batchsize)")
    parser.add_argument('--optimizer', choices=recipe_module.OPTIMIZERS, default=None,
                        help="instead of the recipe's (its weight decay and schedule stay; "
                        "give --lr with it)")
    train_options.add_run_options(parser)
    train_options.add_precision_options(parser)
    parser.add_argument('--no-augment', dest='augment', action='store_false',
                        help='no random augmentation: only the preparation the model needs')
    parser.add_argument('--insize', metavar='S', type=argument_types.positive_int, default=None,
                        help='input side of models that take one (small_cnn, ssd_tiny, '
                        'yolo_fastest)')
    parser.add_argument('--min-size', metavar='S', type=argument_types.positive_int, default=None,
                        help='shorter side images are resized to (R-CNNs, RetinaNet)')
    parser.add_argument('--max-size', metavar='S', type=argument_types.positive_int, default=None,
                        help='the longer side at most (R-CNNs, RetinaNet)')


def train_command(args):
    """The ``cvzoo train`` subcommand: train, print the metric and the predict line."""
    run(args)
    return 0


@dataclasses.dataclass
class Outcome:
    """What :func:`run` returns on rank 0: the held-out metric (None: no held-out data)
    and the seconds of training."""

    metric: float | None
    elapsed_time: float


def run(args, model_name=None, *, task=None, make_model=None, data=None, hyper=None):
    """Train as ``args`` say (the options of :func:`add_arguments`).

    Args:
        args (argparse.Namespace): the parsed command line.
        model_name (str or None): the registered model (None: ``args.model``).
        task (str or None): with ``make_model``: the model's task.
        make_model (callable or None): ``make_model(data)`` -> a model the registry does
            not build (a Darknet cfg's); its file then holds weights only.
        data (TrainingData or None): the data, read by the caller (None: ``--data``
            read by :func:`load_data`).
        hyper (dict or None): the recipe's family-specific hyper-parameters (a script's
            ``--max-expand-ratio``); None values are left to the recipe.

    Returns:
        Outcome or None: None on another rank than 0 (rank 0 reports).

    Raises:
        cvzoo.errors.UsageError: an unknown model, data of another task, a mistake in the
            data or the options, found before the model is built.
        NonFiniteError: the loss became NaN or inf; ``model_final.npz`` is not written.
    """
    name = model_name or getattr(args, 'model', None)
    train_options.check_cuda_graph(args.cuda_graph, args.device)
    if make_model is None:
        model_class = zoo_api.get_model_class(name)
        task = check_task(name, args.task)
        model_kwargs = constructor_options(model_class, name, args)
    if data is None:
        data = load_data(args, name or 'the model', task)
    describe(data, args.data)
    if args.batchsize is not None:
        train_options.check_batchsize(args.batchsize, len(data.train), args.data,
                                      option=args.data_option)
    numpy.random.seed(args.seed)  # the model's initial weights draw from it
    if make_model is None:
        model = build_model(model_class, name, args.pretrained_model, data, model_kwargs)
        model_kwargs = {**model_kwargs, **class_count_kwargs(model_class, data)}
    else:
        model, name, model_kwargs = make_model(data), None, None
    hyper = {key: value for key, value in (hyper or {}).items() if value is not None}
    recipe = recipe_of(model, name or type(model).__name__, seed=args.seed,
                       augment=args.augment, **hyper)
    if args.optimizer is not None:
        recipe = dataclasses.replace(recipe, optimizer=args.optimizer)
    batchsize = args.batchsize or min(recipe.batchsize, len(data.train))
    from cvzoo.training import train  # after the checks: heavy to import

    result = train(
        model, data.train, task=task, label_names=data.label_names, out=args.out,
        val_dataset=data.val, recipe=recipe, iterations=args.iterations,
        epochs=None if args.iterations else args.epochs,  # a script's default epochs
        batchsize=batchsize, lr=args.lr, device=args.device, communicator=args.communicator,
        seed=args.seed, resume=args.resume, model_name=name, model_kwargs=model_kwargs,
        cuda_graph=args.cuda_graph, autocast=args.autocast, loss_scaling=args.loss_scaling)
    if result.elapsed_time is None:  # another rank than 0: rank 0 reports
        return None
    return Outcome(report(result, name, args.out, task), result.elapsed_time)


def describe(data, path):
    """Print what was read: the format, the examples of each split and the classes."""
    held_out = 'no' if data.val is None else len(data.val)
    print(f'data: {path} ({data.format}, {data.task}): {len(data.train)} training and '
          f'{held_out} held-out examples of {len(data.label_names)} classes '
          f'({", ".join(data.label_names)})')


def recipe_of(model, name, **hyper):
    """``model.training_recipe(**hyper)``; a model without one is a UsageError naming it."""
    declare = getattr(model, 'training_recipe', None)
    if declare is None:
        raise errors.UsageError(f'{name}: {type(model).__name__} declares no training recipe '
                                'yet (docs/add_a_model.md)')
    return declare(**hyper)


def check_task(name, task):
    """The model's task; ``--task`` naming another is a UsageError naming both."""
    model_task = zoo_api.model_info(name)['task']
    if task is not None and task != model_task:
        raise errors.UsageError(f'--task {task}: {name} is a {model_task} model; give a '
                                f'{task} model or leave --task out')
    return model_task


def constructor_options(model_class, name, args):
    """{constructor argument: value} of the model options given (--insize, ...); one the
    model does not take is a UsageError naming the option and the model."""
    kwargs = {}
    for flag, argument in MODEL_OPTIONS:
        value = getattr(args, argument, None)
        if value is None:
            continue
        if not _takes(model_class, argument):
            raise errors.UsageError(f'{flag} {value}: {name} takes no {argument} (a model '
                                    'option of others; see docs/training.md)')
        kwargs[argument] = value
    return kwargs


def _takes(model_class, argument):
    """Whether ``model_class(...)`` takes the keyword ``argument``: named by its
    ``__init__`` or by one its ``**kwargs`` are handed on to (up the class hierarchy)."""
    for cls in model_class.__mro__:
        if '__init__' not in vars(cls):
            continue
        parameters = inspect.signature(cls.__init__).parameters
        if argument in parameters:
            return True
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return False
    return False


def load_data(args, name, task):
    """The training and held-out data of ``--data`` for a ``task`` model.

    A ``--format`` (given or recognised) whose task is not the model's is a UsageError
    naming both; so is a named dataset of another task.
    """
    if args.data in NAMED_DATA and not os.path.exists(args.data):
        return _named_data(args, name, task)
    if not os.path.exists(args.data):
        raise errors.UsageError(f'{args.data_option}: no such file or folder {args.data!r}')
    with _formats().parse_once():  # a COCO json's format and examples share one parse
        fmt = detect_format(args.data, task) if args.format == 'auto' else args.format
        check_format_task(fmt, task, name, f'{args.data_option} {args.data}')
        return _formats().load_training_data(args.data, task=task, format=fmt, val=args.val,
                                             val_fraction=args.val_fraction, seed=args.seed)


def _formats():
    """cvzoo.datasets.formats, imported when data is read (its readers are many)."""
    from cvzoo.datasets import formats

    return formats


def detect_format(path, task):
    """The format of the data at ``path``, read for ``task`` where the format allows
    (a COCO json with masks is 'coco' for a detector); else its own, which
    :func:`check_format_task` then refuses with the model's and the data's tasks."""
    formats = _formats()
    fmt = formats.detect_format(path)
    if FORMAT_TASKS[fmt] != task:
        try:
            return formats.detect_format(path, task)
        except errors.UsageError:
            pass  # refused below, naming the model
    return fmt


def check_format_task(fmt, task, name, data):
    """Refuse data whose format holds examples of another task than the model's, naming
    both tasks and ``data`` (the option and its value; a UsageError)."""
    if FORMAT_TASKS[fmt] != task:
        raise errors.UsageError(
            f'{name} is a {task} model, but {data} holds {FORMAT_TASKS[fmt]} data '
            f'({fmt}); give a {FORMAT_TASKS[fmt]} model (`cvzoo models --task '
            f'{FORMAT_TASKS[fmt]}`) or {task} data')


def _named_data(args, name, task):
    """'digits' (scikit-learn's), 'voc07' or 'voc07+12' through the registry."""
    from cvzoo.datasets import registry as datasets

    data_task = NAMED_DATA[args.data]
    if data_task != task:
        raise errors.UsageError(f'{name} is a {task} model, but {args.data_option} '
                                f'{args.data} is {data_task} data; give a {data_task} model '
                                f'or {task} data')
    if task == 'classification':
        train, val, label_names = datasets.load_classification_training_splits(
            args.data, args.val, args.seed)
    else:
        train, val, label_names = datasets.load_detection_training_splits(args.data)
    return _formats().TrainingData(train, val, tuple(label_names), task, args.data)


def class_count_kwargs(model_class, data):
    """The constructor arguments that fit the model to the data's classes:
    ``n_fg_class`` or ``n_class``, and a keypoint detector's ``n_point``."""
    parameters = inspect.signature(model_class.__init__).parameters
    key = 'n_fg_class' if 'n_fg_class' in parameters else 'n_class'
    kwargs = {key: len(data.label_names)}
    if 'n_point' in parameters and data.task == 'keypoint_detection':
        kwargs['n_point'] = int(data.train[0][1].shape[1])  # point: (R, K, 2)
    return kwargs


def build_model(model_class, name, pretrained_model, data, model_kwargs):
    """The model ``name`` for the data's classes, on the host.

    ``pretrained_model``: 'none' (random weights), a zoo key (loaded, its head re-made for
    the data's classes, as the constructors do), or a file: a ``model_final.npz`` of this
    model keeps its head when it names the data's classes, else gets a new one.
    """
    classes = class_count_kwargs(model_class, data)
    if pretrained_model in (None, 'none'):
        model = zoo_api.get_model(name, **classes, **model_kwargs)
    elif trained_model.read_model_config(pretrained_model) is not None:
        model = zoo_api.get_model(name, pretrained_model=pretrained_model, **model_kwargs)
        if tuple(model.label_names or ()) != tuple(data.label_names):
            model.reset_head(next(iter(classes.values())))
    else:
        if not os.path.isfile(pretrained_model):
            zoo_api.resolve_weights(model_class, pretrained_model)  # an unknown key: names them
        model = zoo_api.get_model(name, pretrained_model=pretrained_model, **classes,
                                  **model_kwargs)
    model.label_names = tuple(data.label_names)
    return model


def print_outcome(outcome, key):
    """Print a train script's last line, ``{"KEY": metric, "elapsed_time": seconds}``
    (JSON), and return the metric (None off rank 0)."""
    if outcome is None:
        return None
    print(json.dumps({key: outcome.metric, 'elapsed_time': outcome.elapsed_time}))
    return outcome.metric


def report(result, name, out, task):
    """Print the held-out metric, the final model's path and the ``cvzoo predict`` line
    that uses it; return the metric (None without held-out data)."""
    from cvzoo.training import evaluation

    key = evaluation.metric_key(task)
    final = os.path.join(out, 'model_final.npz')
    metric = result.metrics.get(key)
    if metric is None:
        print('no held-out data: nothing evaluated')
    else:
        metric = float(metric)
        print(f'{key}: {metric:.4f} on the held-out data')
    print(f'model: {final}')
    if name is not None:
        print(f'predict: cvzoo predict IMAGE --model {name} --pretrained-model {final}')
    return metric
