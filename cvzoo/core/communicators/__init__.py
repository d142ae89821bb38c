"""Multi-process data parallelism on MPI (and NCCL for GPU all-reduce).

The names of ChainerMN, where its users look for them::

    from cvzoo.core import communicators

    comm = communicators.create_communicator('mpi')
    optimizer = communicators.create_multi_node_optimizer(Adam(), comm).setup(model)
    train = communicators.scatter_dataset(train, comm, shuffle=True)
    evaluator = communicators.create_multi_node_evaluator(evaluator, comm)

None of them imports mpi4py before a communicator is made.
"""

from cvzoo.core.communicators.create_communicator import create_communicator
from cvzoo.core.communicators.multi_node_evaluator import create_multi_node_evaluator
from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer
from cvzoo.core.communicators.scatter_dataset import scatter_dataset

__all__ = ['create_communicator', 'create_multi_node_evaluator',
           'create_multi_node_optimizer', 'scatter_dataset']
