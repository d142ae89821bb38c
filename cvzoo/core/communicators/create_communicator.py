"""create_communicator: the entry point of multi-process training."""

import atexit
import os
import sys
import time
import traceback

from cvzoo.core.communicators import mpi_communicator, nccl_communicator

_COMMUNICATORS = {'mpi': mpi_communicator.MpiCommunicator,
                  'nccl': nccl_communicator.NcclCommunicator}


def create_communicator(communicator_name='mpi', mpi_comm=None, allreduce_grad_dtype=None,
                        abort_on_error=True):
    """Return a communicator for the processes of an ``mpiexec -n N`` job.

    Args:
        communicator_name (str): ``'mpi'`` (CPU or GPU arrays, through host memory) or
            ``'nccl'`` (GPU arrays all-reduced by NCCL; needs the GPU array module).
        mpi_comm: an mpi4py communicator (default ``MPI.COMM_WORLD``).
        allreduce_grad_dtype: None or ``numpy.float16`` for half-precision gradients.
        abort_on_error (bool): install a ``sys.excepthook`` that prints the traceback of
            an uncaught exception and aborts the whole MPI job, so a failing rank takes
            the job down instead of leaving the others waiting forever.

    Returns:
        MpiCommunicator or NcclCommunicator.
    """
    if communicator_name not in _COMMUNICATORS:
        raise ValueError(f"communicator_name: expected one of {sorted(_COMMUNICATORS)}, got "
                         f'{communicator_name!r}')
    comm = _COMMUNICATORS[communicator_name](mpi_comm, allreduce_grad_dtype)
    if abort_on_error:
        _install_abort_hook(comm)
    return comm


def _install_abort_hook(comm):
    sys.excepthook = _AbortHook(comm, sys.excepthook)
    # a communicator of its own, so the exit barrier never meets the job's collectives
    atexit.register(_leave_together, comm, comm.mpi.COMM_WORLD.Dup())


def _exit_timeout():
    value = os.environ.get('CVZOO_MPI_EXIT_TIMEOUT', '300')
    try:
        return float(value)
    except ValueError:
        raise ValueError(f'CVZOO_MPI_EXIT_TIMEOUT: expected seconds, got {value!r}') from None


def _leave_together(comm, exit_comm):
    """At exit: wait for every rank to exit too; abort the job if they do not come.

    A rank that leaves normally while others still train would leave them waiting in
    their next collective call for ever. Each rank therefore enters a non-blocking
    barrier when its interpreter exits: when every rank gets there, all leave; when the
    others do not arrive within ``CVZOO_MPI_EXIT_TIMEOUT`` seconds (default 300), this
    rank aborts the job, naming itself.
    """
    if exit_comm.Get_size() == 1 or comm.mpi.Is_finalized():
        return
    request = exit_comm.Ibarrier()
    deadline = time.monotonic() + _exit_timeout()
    while not request.Test():
        if time.monotonic() > deadline:
            sys.stderr.write(
                f'rank {comm.rank} of {comm.size} left (its program ended) while other '
                f'ranks kept running and did not end within {_exit_timeout():g} s; '
                'aborting the MPI job so that they do not wait for ever\n')
            sys.stderr.flush()
            comm.mpi.COMM_WORLD.Abort(1)
        time.sleep(0.01)
    exit_comm.Free()


class _AbortHook:
    """sys.excepthook: print the traceback with the rank, then abort every rank."""

    def __init__(self, comm, previous):
        self.comm, self.previous = comm, previous

    def __call__(self, exc_type, exc, tb):
        sys.stderr.write(f'rank {self.comm.rank} of {self.comm.size}: uncaught exception, '
                         'aborting the MPI job\n'
                         + ''.join(traceback.format_exception(exc_type, exc, tb)))
        sys.stderr.flush()
        self.comm.mpi.COMM_WORLD.Abort(1)
