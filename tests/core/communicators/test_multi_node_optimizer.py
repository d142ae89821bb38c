"""The multi-node optimizer with a recording communicator (no MPI): set up through the
wrapper, it stays the wrapper, so every update broadcasts and averages the gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import optimizers
from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer
from cvzoo.errors import UsageError


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


def _gradient_after_update(loss_scaler):
    model = L.Linear(3, 2, initialW=numpy.ones((2, 3), numpy.float32))
    optimizer = create_multi_node_optimizer(optimizers.SGD(lr=0.0), _RecordingComm())
    optimizer.setup(model)
    optimizer.loss_scaler = loss_scaler
    optimizer.update(lambda: F.sum(model(numpy.ones((2, 3), numpy.float32)) ** 2))
    return model.W.grad


def test_a_loss_scaler_scales_the_loss_and_unscales_the_gradient():
    scaler = optimizers.LossScaler(init_scale=2.0 ** 12)
    numpy.testing.assert_array_equal(_gradient_after_update(scaler),
                                     _gradient_after_update(None))


def test_double_buffering_with_a_loss_scaler_is_refused():
    model = L.Linear(3, 2)
    optimizer = create_multi_node_optimizer(optimizers.SGD(), _RecordingComm(),
                                            double_buffering=True).setup(model)
    optimizer.loss_scaler = optimizers.LossScaler()
    with pytest.raises(UsageError, match='double_buffering=True cannot be used with a '
                                         'loss_scaler'):
        optimizer.update(lambda: F.sum(model(numpy.ones((2, 3), numpy.float32))))
