"""Several processes under faults: a rank that fails, or leaves while others wait, takes
the whole job down naming the rank, instead of leaving the others waiting for ever. Runs
tests.helpers.mpi_worker through mpi_jobs; skips without mpi4py."""

import pytest

from tests.helpers import mpi_jobs

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
