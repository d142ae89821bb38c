"""Several processes under faults: a rank that fails, or leaves while others wait, takes
the whole job down naming the rank, instead of leaving the others waiting for ever; a
multi-node optimizer set up in the chained form of ChainerMN's Fig. 5 does not fall back
to a plain one that trains each rank alone. Runs tests.helpers.mpi_worker through
mpi_jobs; skips without mpi4py."""

import numpy
import pytest

from cvzoo.core import optimizers
from cvzoo.core.serializers import npz
from tests.helpers import mpi_jobs, mpi_worker

# case: (worker case, environment, texts the output holds)
FAULTS = {
    'rank_raises': ('raise', {}, ['rank 1 failed on purpose', 'RuntimeError', 'rank 1 of 2']),
    'rank_leaves_early': ('leave_early', {'CVZOO_MPI_EXIT_TIMEOUT': '2'}, ['rank 1 of 2 left']),
}


@pytest.mark.parametrize('case', list(FAULTS), ids=list(FAULTS))
def test_a_faulty_rank_takes_the_job_down(tmp_path, case):
    worker_case, env, texts = FAULTS[case]
    result = mpi_jobs.run_worker(worker_case, tmp_path, timeout=60, **env)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    for text in texts:
        assert text in output, output[-2000:]


def test_chained_setup_of_the_multi_node_optimizer_averages_over_the_ranks(tmp_path):
    result = mpi_jobs.run_worker('train_chained', tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    expected = mpi_worker.reference_train(optimizers.Adam)
    for rank in (0, 1):
        params = npz.read_npz(tmp_path / f'params_rank{rank}.npz')
        for path, array in expected.items():
            numpy.testing.assert_allclose(params[path[1:]], array, rtol=1e-4, atol=1e-5,
                                          err_msg=f'rank {rank} {path}')
