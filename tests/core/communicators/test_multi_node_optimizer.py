"""The multi-node optimizer with a recording communicator (no MPI): set up through the
wrapper, it stays the wrapper, so every update broadcasts and averages the gradients."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import optimizers
from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer


class _RecordingComm:
    def __init__(self):
        self.calls = []

    def bcast_data(self, model):
        self.calls.append('bcast_data')

    def allreduce_grad(self, model, zero_fill=True):
        self.calls.append('allreduce_grad')


def test_chained_setup_returns_the_wrapper_that_averages_gradients():
    comm = _RecordingComm()
    model = L.Linear(3, 2)
    optimizer = create_multi_node_optimizer(optimizers.Adam(), comm).setup(model)
    assert optimizer.target is model
    optimizer.update(lambda: F.sum(model(numpy.ones((2, 3), numpy.float32)) ** 2))
    assert comm.calls == ['bcast_data', 'allreduce_grad']
    assert optimizer.t == 1
