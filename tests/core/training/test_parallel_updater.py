import numpy
import pytest

from cvzoo.core import backend, optimizers
from cvzoo.core.training import trainer as trainer_module
from cvzoo.core.training.extensions.log_report import LogReport
from cvzoo.core.training.iterators.serial_iterator import SerialIterator
from cvzoo.core.training.updaters.parallel_updater import ParallelUpdater
from cvzoo.core.training.updaters.standard_updater import StandardUpdater


def _train(toy, make_updater, batch_size, n_steps, tmp_path):
    model = toy.TinyClassifier()
    optimizer = optimizers.MomentumSGD(lr=0.2).setup(model)
    iterator = SerialIterator(toy.make_dataset(n=30), batch_size, seed=0)
    updater = make_updater(iterator, optimizer)
    trainer = trainer_module.Trainer(updater, (n_steps, 'iteration'), out=str(tmp_path))
    trainer.extend(LogReport(trigger=(1, 'iteration'), filename=None))
    trainer.run()
    params = {path: backend.to_numpy(p.array).copy() for path, p in model.namedparams()}
    return params, trainer.get_extension('LogReport').log


@pytest.mark.parametrize('batch_size, devices', [
    (8, {'main': 'cpu', 'second': 'cpu'}),
    (7, {'main': 'cpu', 'second': 'cpu'}),
    (7, {'main': 'cpu', 'second': 'cpu', 'third': -1}),
    (8, {'main': 'cuda:0', 'second': 'cuda:1'}),
    (7, {'main': 'cuda:0', 'second': 'cuda:1'}),
], ids=['even_split', 'uneven_split', 'three_copies', 'two_gpus_even', 'two_gpus_uneven'])
def test_same_parameters_as_the_full_batch(toy, tmp_path, batch_size, devices, request):
    if 'cuda:1' in devices.values():
        request.getfixturevalue('two_gpus')  # skips without two GPUs
    expected, expected_log = _train(toy, StandardUpdater, batch_size, 6, tmp_path)
    params, log = _train(toy, lambda it, opt: ParallelUpdater(it, opt, devices=devices),
                         batch_size, 6, tmp_path)
    for path, array in params.items():
        numpy.testing.assert_allclose(array, expected[path], rtol=1e-5, atol=1e-6,
                                      err_msg=path)
    assert [e['main/loss'] for e in log] == pytest.approx(
        [e['main/loss'] for e in expected_log], rel=1e-5)
    # the parameters did move, so the comparison means something
    assert not numpy.allclose(params['/l1/W'], toy.TinyClassifier().l1.W.array)


def test_copies_hold_the_main_parameters_after_an_update(toy):
    model = toy.TinyClassifier()
    optimizer = optimizers.MomentumSGD(lr=0.2).setup(model)
    updater = ParallelUpdater(SerialIterator(toy.make_dataset(), 4, seed=0), optimizer,
                              devices={'main': 'cpu', 'second': 'cpu'})
    updater.update()
    second = updater.models['second']
    assert second is not model
    numpy.testing.assert_array_equal(second.l1.W.array, model.l1.W.array)
    assert second.l1.W.array is not model.l1.W.array


def test_loss_func_gets_the_model(toy):
    calls = []

    def loss_func(model, x, t):
        calls.append(model)
        return model(x, t)

    optimizer = optimizers.MomentumSGD().setup(toy.TinyClassifier())
    updater = ParallelUpdater(SerialIterator(toy.make_dataset(), 4), optimizer,
                              devices={'main': 'cpu', 'second': 'cpu'}, loss_func=loss_func)
    updater.update()
    assert calls == [updater.models['main'], updater.models['second']]


def test_devices_must_name_main(toy):
    optimizer = optimizers.MomentumSGD().setup(toy.TinyClassifier())
    with pytest.raises(ValueError, match="devices.*'main'"):
        ParallelUpdater(SerialIterator(toy.make_dataset(), 4), optimizer, devices={'a': 'cpu'})
