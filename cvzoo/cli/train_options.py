"""The options of a training run, defined once with their checks.

``cvzoo train`` (:mod:`cvzoo.cli.train`, whose options every ``scripts/train_*.py``
shares) adds them with :func:`add_run_options` and :func:`add_precision_options`;
:func:`check_batchsize` refuses a batch larger than the training set once the set is
loaded; :func:`run` ends a train script and :data:`FAILURES` the command (see
:mod:`cvzoo.cli.entry`).
"""

import argparse

from cvzoo import errors
from cvzoo.cli import argument_types, entry
from cvzoo.core import backend
from cvzoo.core.communicators.data_parallel import COMMUNICATORS
from cvzoo.core.mixed_precision import AUTOCAST_DTYPES
from cvzoo.core.training.extensions import fail_on_non_number


def add_run_options(parser):
    """Add --out, --device, --communicator, --seed, --cuda-graph and --resume: where and
    how a run goes, whatever it trains (``cvzoo train`` and the train scripts)."""
    parser.add_argument('--out', metavar='DIR', type=argument_types.output_folder,
                        default='result',
                        help='folder of the log, the snapshots and the final model (its '
                        'parent folder must exist)')
    parser.add_argument('--device', metavar='D', type=argument_types.device, default='cpu',
                        help="'cpu' or 'cuda:N'")
    parser.add_argument('--communicator', choices=COMMUNICATORS, default='none',
                        help='data-parallel over the processes of mpiexec (mpi: CPUs or '
                        'GPUs, nccl: GPUs)')
    parser.add_argument('--seed', metavar='S', type=int, default=0,
                        help='of the weights, the split, the shuffles and the augmentation')
    parser.add_argument('--cuda-graph', action='store_true',
                        help='capture the training step as a CUDA graph after warm-up and '
                        'replay it each iteration (GPU only; a step that cannot be '
                        'captured warns once and trains eagerly)')
    parser.add_argument('--resume', action='store_true',
                        help='continue from the latest snapshot in --out')


def add_precision_options(parser):
    """Add --dtype (alias --autocast) and --loss-scaling (mixed precision, docs/gpu.md)."""
    parser.add_argument('--dtype', '--autocast', dest='autocast', type=_compute_dtype,
                        default=None, metavar='{float32,bfloat16,float16}',
                        help='mixed precision: convolutions and products in this dtype '
                        '(float32 weights; float32: none)')
    parser.add_argument('--loss-scaling', action=argparse.BooleanOptionalAction, default=None,
                        help='dynamic loss scaling (default: on with --autocast float16)')


def _compute_dtype(text):
    """'float32' -> None (no autocast); 'bfloat16' or 'float16' as they are."""
    if text == 'float32':
        return None
    if text not in AUTOCAST_DTYPES:
        raise argparse.ArgumentTypeError(
            f"expected 'float32' or one of {', '.join(AUTOCAST_DTYPES)}, got {text!r}")
    return text


def check_batchsize(batchsize, n_example, dataset, option='--dataset'):
    """Refuse a batch larger than the training set: each batch would hold some examples
    twice, and the run would take long to do what a smaller batch does.

    Args:
        batchsize (int): the --batchsize given.
        n_example (int): the training examples of ``dataset``.
        dataset (str): the data given, named in the message.
        option (str): the option that gave it (``--dataset``, ``cvzoo train``'s ``--data``).

    Raises:
        cvzoo.errors.UsageError: naming --batchsize, the data and its size.
    """
    if n_example == 0:
        raise errors.UsageError(f'{option} {dataset}: holds no training examples')
    if batchsize > n_example:
        raise errors.UsageError(
            f'--batchsize {batchsize}: larger than the {n_example} training examples of '
            f'{option} {dataset}; give --batchsize {n_example} or less')


def check_cuda_graph(cuda_graph, device):
    """Refuse --cuda-graph without a GPU --device.

    Raises:
        cvzoo.errors.UsageError: naming --cuda-graph and the --device given.
    """
    if cuda_graph and backend.get_device(device).kind != 'cuda':
        raise errors.UsageError(f'--cuda-graph: CUDA graphs need a GPU, give --device cuda:N '
                                f'(got --device {device})')


def failures(final_file='model_final.npz'):
    """The failures of a training run for :func:`cvzoo.cli.entry.call`: a non-finite loss
    ends it with one line saying that ``final_file`` was not written, status 1."""
    return {fail_on_non_number.NonFiniteError: f'{final_file} was not written'}


FAILURES = failures()


def run(main, final_file='model_final.npz'):
    """:func:`cvzoo.cli.entry.run` for a train script: besides a user mistake (one line,
    status 2), a non-finite loss ends it with one line saying that ``final_file`` was not
    written, status 1."""
    entry.run(main, failures=failures(final_file))
