"""Multi-process tests: run tests.helpers.mpi_worker under ``mpiexec -n 2`` and check the results.

Skipped when mpi4py or mpiexec is absent (``pip install 'cvzoo[mpi]'``).
"""

import json
import os
import pathlib

import numpy
import pytest

from cvzoo.core.serializers import npz
from tests.helpers import mpi_jobs, mpi_worker

pytest.importorskip('mpi4py')


def _check(result):
    assert result.returncode == 0, result.stdout + result.stderr


def test_two_ranks_equal_one_process_with_the_doubled_batch(tmp_path):
    _check(mpi_jobs.run_worker('train', tmp_path))
    expected = mpi_worker.reference_train()
    for rank in (0, 1):
        params = npz.read_npz(tmp_path / f'params_rank{rank}.npz')
        for path, array in expected.items():
            numpy.testing.assert_allclose(params[path[1:]], array, rtol=1e-5, atol=1e-6,
                                          err_msg=f'rank {rank} {path}')


@pytest.mark.parametrize('communicator', ['mpi', 'nccl'])
def test_each_rank_trains_on_its_own_gpu(tmp_path, communicator):
    _check(mpi_jobs.run_worker(f'train_gpu_{communicator}', tmp_path, CVZOO_FAKE_CUDA='1'))
    expected = mpi_worker.reference_train()
    for rank in (0, 1):
        placement = json.loads((tmp_path / f'device_rank{rank}.json').read_text())
        # the rank's GPU was current before anything was made, and NCCL was made on it
        assert placement['device'] == f'cuda:{rank}' and placement['current'] == rank
        if communicator == 'nccl':
            assert placement['nccl'] == rank
        params = npz.read_npz(tmp_path / f'params_rank{rank}.npz')
        for path, array in expected.items():
            numpy.testing.assert_allclose(params[path[1:]], array, rtol=1e-5, atol=1e-6,
                                          err_msg=f'rank {rank} {path}')


def test_nccl_mean_of_float16_does_not_overflow_and_float64_keeps_its_precision(tmp_path):
    _check(mpi_jobs.run_worker('grads_nccl', tmp_path, CVZOO_FAKE_CUDA='1'))
    for rank in (0, 1):
        grads = json.loads((tmp_path / f'grads_rank{rank}.json').read_text())
        # the sum 40000 + 41000 is past float16's largest number; the mean is not
        assert grads['float16'] == ['float16', 40512.0]
        assert grads['float64'] == ['float64', 1.0 + 0.5e-12]


def test_a_rank_that_ends_early_takes_the_job_down(tmp_path):
    result = mpi_jobs.run_worker('leave_early', tmp_path, timeout=60, CVZOO_MPI_EXIT_TIMEOUT='2')
    assert result.returncode != 0
    assert 'rank 1 of 2 left' in result.stdout + result.stderr


def test_a_failing_rank_takes_the_job_down(tmp_path):
    result = mpi_jobs.run_worker('raise', tmp_path, timeout=60)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert 'rank 1 failed on purpose' in output and 'rank 1 of 2' in output


def test_two_rank_evaluator_equals_one_process(tmp_path):
    _check(mpi_jobs.run_worker('evaluate', tmp_path))
    expected = mpi_worker.reference_evaluate()
    reports = [json.loads((tmp_path / f'evaluate_rank{r}.json').read_text()) for r in (0, 1)]
    assert [r['n'] for r in reports] == [5, 4]
    for report in reports:
        assert report['report'] == pytest.approx(expected)
    # the shares' own scores differ, so a plain mean of them would be wrong
    assert reports[0]['local']['top1'] != reports[1]['local']['top1']


def test_one_rank_downloads_the_other_waits(tmp_path):
    (tmp_path / 'weights.bin').write_bytes(os.urandom(1000))
    _check(mpi_jobs.run_worker('download', tmp_path))
    assert (tmp_path / 'downloads.txt').read_text().count('\n') == 1
    paths = {(tmp_path / f'download_rank{r}.txt').read_text() for r in (0, 1)}
    assert len(paths) == 1
    assert pathlib.Path(paths.pop()).read_bytes() == (tmp_path / 'weights.bin').read_bytes()


def _npz(path):
    with numpy.load(path) as arrays:
        return dict(arrays)


def test_nccl_all_reduce_is_captured_with_the_training_step_and_replayed(tmp_path):
    """GraphedUpdate of a multi-node optimizer: the capture holds the NCCL all-reduce, so
    each replay averages over the ranks, bit for bit as the eager steps do."""
    _check(mpi_jobs.run_worker('graph_nccl', tmp_path, CVZOO_FAKE_CUDA='1'))
    expected = mpi_worker.reference_train(lr_change=mpi_worker.LR_CHANGE)
    alone = mpi_worker.reference_train(ranks=(0,), lr_change=mpi_worker.LR_CHANGE)
    for rank in (0, 1):
        report = json.loads((tmp_path / f'graph_rank{rank}.json').read_text())
        assert report['graphed'] == {'captured': True, 'warnings': []}
        eager = _npz(tmp_path / f'eager_rank{rank}.npz')
        graphed = _npz(tmp_path / f'graphed_rank{rank}.npz')
        for path, array in expected.items():
            numpy.testing.assert_array_equal(graphed[path[1:]], eager[path[1:]],
                                             err_msg=f'rank {rank} {path}')
            # the mean over both ranks' batches: not what rank 0's half alone gives
            numpy.testing.assert_allclose(graphed[path[1:]], array, rtol=1e-5, atol=1e-6,
                                          err_msg=f'rank {rank} {path}')
            assert not numpy.allclose(graphed[path[1:]], alone[path], rtol=1e-3, atol=1e-4)


def test_nccl_calls_go_on_the_given_stream_and_a_capture_takes_only_its_own(tmp_path):
    _check(mpi_jobs.run_worker('streams_nccl', tmp_path, CVZOO_FAKE_CUDA='1'))
    for rank in (0, 1):
        result = json.loads((tmp_path / f'streams_rank{rank}.json').read_text())
        assert result['eager_sum'] == 3.0  # 1 + 2, on a side stream
        assert 'cudaErrorInvalidResourceHandle: ncclAllReduce on stream' in \
            result['eager_other_device']
        assert 'neither 0 nor a stream' in result['eager_no_stream']
        for case in ('capture_null_stream', 'capture_other_stream'):
            refused, ended = result[case]
            assert refused.startswith('CUDARuntimeError: cudaErrorStreamCaptureImplicit: '
                                      'ncclAllReduce at '), refused
            assert 'mpi_worker.py:' in refused  # the call site
            assert 'invalidated by ncclAllReduce' in ended
        # recorded, not run, by the capture; each launch sums again
        assert result['after_capture'] == rank + 1.0
        assert (result['after_launch'], result['after_second_launch']) == (3.0, 6.0)
