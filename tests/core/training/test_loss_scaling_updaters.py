"""The updaters run backward from the scaled loss when the optimizer holds a LossScaler:
while no gradient overflows, the parameters are those of the same run without one."""

import numpy
import pytest

from cvzoo.core import backend, optimizers
from cvzoo.core.training.iterators.serial_iterator import SerialIterator
from cvzoo.core.training.updaters.parallel_updater import ParallelUpdater
from cvzoo.core.training.updaters.standard_updater import StandardUpdater

UPDATERS = {
    'standard': lambda it, opt: StandardUpdater(it, opt),
    'parallel_cpu': lambda it, opt: ParallelUpdater(
        it, opt, devices={'main': 'cpu', 'second': 'cpu'}),
    'parallel_two_gpus': lambda it, opt: ParallelUpdater(
        it, opt, devices={'main': 'cuda:0', 'second': 'cuda:1'}),
}


def _params_after(toy, make_updater, loss_scaler, n_steps=4):
    model = toy.TinyClassifier()
    optimizer = optimizers.MomentumSGD(lr=0.2).setup(model)
    optimizer.loss_scaler = loss_scaler
    updater = make_updater(SerialIterator(toy.make_dataset(n=30), 8, seed=0), optimizer)
    for _ in range(n_steps):
        updater.update()
    return {path: backend.to_numpy(p.array) for path, p in model.namedparams()}


@pytest.mark.parametrize('make_updater', UPDATERS.values(), ids=list(UPDATERS))
def test_a_loss_scaler_changes_nothing_while_gradients_are_finite(toy, make_updater, request):
    if make_updater is UPDATERS['parallel_two_gpus']:
        request.getfixturevalue('two_gpus')
    expected = _params_after(toy, make_updater, None)
    scaler = optimizers.LossScaler(init_scale=2.0 ** 10)
    params = _params_after(toy, make_updater, scaler)
    assert scaler.n_skipped == 0 and scaler.loss_scale == 2.0 ** 10
    for path, array in params.items():
        numpy.testing.assert_allclose(array, expected[path], rtol=1e-6, atol=1e-7,
                                      err_msg=path)
    assert not numpy.allclose(params['/l1/W'], toy.TinyClassifier().l1.W.array)
