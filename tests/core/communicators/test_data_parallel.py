import numpy
import pytest

from cvzoo.core.communicators import data_parallel, mpi_communicator


class _FakeComm:
    rank, size, intra_rank = 1, 2, 1
    rank_device = mpi_communicator.MpiCommunicator.rank_device


@pytest.fixture
def fake(monkeypatch):
    calls = {}
    monkeypatch.setattr(data_parallel, 'create_communicator', lambda name: _FakeComm())

    def scatter(dataset, comm, shuffle, seed):
        calls['scatter'] = (len(dataset), shuffle, seed)
        return dataset[comm.rank::comm.size]

    monkeypatch.setattr(data_parallel, 'scatter_dataset', scatter)
    monkeypatch.setattr(data_parallel.multi_node_optimizer, 'create_multi_node_optimizer',
                        lambda optimizer, comm: ('wrapped', optimizer))
    return calls


def test_rank_gets_its_share_and_its_gpu(fake, two_gpus):
    comm, dataset, optimizer, device = data_parallel.setup_data_parallel(
        'mpi', list(range(10)), 'opt', 'cuda:0', seed=3)
    assert dataset == [1, 3, 5, 7, 9] and fake['scatter'] == (10, True, 3)
    assert optimizer == ('wrapped', 'opt')
    assert device == 'cuda:1'  # this rank's own GPU, made current
    assert two_gpus[1].xp.cuda.Device().id == 1
    two_gpus[0].use()


def test_cpu_device_is_kept(fake):
    *_, device = data_parallel.setup_data_parallel('mpi', numpy.arange(4), 'opt', 'cpu')
    assert device == 'cpu'
