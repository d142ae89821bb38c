"""cvzoo.training.train data-parallel on two MPI ranks (skips without mpi4py/mpiexec)."""

import json

from tests.helpers import mpi_jobs


def test_two_ranks_share_the_data_and_rank_0_alone_writes(tmp_path):
    job = mpi_jobs.run_worker('mpi', tmp_path, timeout=240,
                              module='tests.training.mpi_train_worker')
    assert job.returncode == 0, job.stderr[-3000:]
    ranks = [json.loads((tmp_path / f'rank{r}.json').read_text()) for r in (0, 1)]
    assert ranks[0]['elapsed_time'] > 0 and ranks[1]['elapsed_time'] is None
    # the peak rate is the recipe's for one process's batch, times the two processes
    assert ranks[0]['lr'] == ranks[1]['lr'] == 2 * ranks[0]['recipe_lr']
    assert [rank['n_examples'] for rank in ranks] == [4, 4]
    # one metric over both ranks' validation examples, the same on each
    assert ranks[0]['metrics'] == ranks[1]['metrics'] != {}
    assert (tmp_path / 'run' / 'model_final.npz').is_file()
    assert sorted(p.name for p in (tmp_path / 'run').glob('snapshot_iter_*')) == \
        ['snapshot_iter_3']


def test_nccl_training_step_captured_as_a_cuda_graph_averages_on_each_replay(tmp_path):
    job = mpi_jobs.run_worker('nccl_graph', tmp_path, timeout=240,
                              module='tests.training.mpi_train_worker', CVZOO_FAKE_CUDA='1')
    assert job.returncode == 0, job.stderr[-3000:]
    ranks = [json.loads((tmp_path / f'rank{r}.json').read_text()) for r in (0, 1)]
    for rank in ranks:
        assert rank['captured'] and rank['warnings'] == []
    # each rank trained on its own share: only averaged gradients keep them equal
    assert ranks[0]['params'] == ranks[1]['params']
    assert [rank['n_examples'] for rank in ranks] == [4, 4]
