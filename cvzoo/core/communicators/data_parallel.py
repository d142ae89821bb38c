"""The few lines every training script needs to run data-parallel under mpiexec."""

from cvzoo.core.communicators import multi_node_optimizer
from cvzoo.core.communicators.create_communicator import create_communicator
from cvzoo.core.communicators.scatter_dataset import scatter_dataset

# a training run's choices: one process, or data-parallel over the processes of mpiexec
COMMUNICATORS = ('none', 'mpi', 'nccl')


def create_rank_communicator(name, device):
    """The communicator ``name`` and this rank's device: a GPU ``device`` becomes this
    rank's own GPU, made current before the model or any array is made.

    Returns:
        tuple: (communicator, device as a str).
    """
    comm = create_communicator(name)
    return comm, str(comm.rank_device(device))


def setup_data_parallel(name, dataset, optimizer, device, seed=None):
    """Create a communicator, give this rank its share of the data, all-reduce gradients.

    Args:
        name (str): ``'mpi'`` or ``'nccl'``.
        dataset: the whole training set (every rank passes the same one).
        optimizer: the set-up optimizer; it is wrapped to average gradients over ranks.
        device (str): the script's ``--device``; a GPU becomes this rank's own GPU.
        seed (int): seed of the shuffled split, the same on every rank.

    Returns:
        tuple: (communicator, this rank's dataset, wrapped optimizer, device).
    """
    comm, device = create_rank_communicator(name, device)
    dataset = scatter_dataset(dataset, comm, shuffle=True, seed=seed)
    return comm, dataset, multi_node_optimizer.create_multi_node_optimizer(optimizer, comm), device
