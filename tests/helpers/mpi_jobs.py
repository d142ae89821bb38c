"""Run tests.helpers.mpi_worker under ``mpiexec -n 2`` (tests/core/communicators,
tests/faults); skips without mpi4py or mpiexec."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _mpiexec():
    beside_python = pathlib.Path(sys.executable).with_name('mpiexec')
    return str(beside_python) if beside_python.exists() else shutil.which('mpiexec')


def run_worker(case, out, timeout=120, module='tests.helpers.mpi_worker', **extra_env):
    """Run the worker's ``case`` on two ranks with ``out`` as its folder.

    Args:
        case (str): a case of the worker ``module`` (default
            :mod:`tests.helpers.mpi_worker`).
        out (pathlib.Path): the folder the ranks write to (``out/home`` is their
            ``$CVZOO_HOME``).
        timeout (float): seconds before the job is killed.
        module (str): the worker, run as ``python -m module case out``.
        **extra_env: further environment variables.

    Returns:
        subprocess.CompletedProcess: with the text of stdout and stderr.
    """
    pytest.importorskip('mpi4py')
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip('mpiexec is absent')
    command = [mpiexec, '-n', '2', '--oversubscribe']
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        command.append('--allow-run-as-root')
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism='none',
               OMPI_MCA_rmaps_base_oversubscribe='1', PYTHONPATH=str(ROOT),
               CVZOO_HOME=str(out / 'home'), OMP_NUM_THREADS='1', **extra_env)
    env.pop('CVZOO_WEIGHTS_MIRROR', None)  # the download case counts fetches of the URL
    command += [sys.executable, '-m', module, case, str(out)]
    return subprocess.run(command, check=False, env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=str(ROOT))
