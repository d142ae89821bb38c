import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend, optimizers
from cvzoo.core.training import reporter
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


class _LazyNet(L.Chain):
    """Every layer shaped by its first input: nothing is initialised before a forward."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(None, 4, 3)
            self.fc = L.Linear(None, 3)

    def forward(self, x, t):
        loss = F.softmax_cross_entropy(self.fc(F.relu(self.conv(x))), t)
        reporter.report({'loss': loss}, self)
        return loss


def _one_lazy_step(make_updater, main_device):
    """The parameters after one update of a fresh _LazyNet, its initial weights seeded."""
    numpy.random.seed(0)
    device = backend.get_device(main_device)
    if device.kind == 'cuda':
        with device:
            device.xp.random.seed(0)  # initializers draw from the device's generator
    backend.get_device('cuda:0' if device.kind == 'cuda' else 'cpu').use()
    rng = numpy.random.RandomState(1)
    dataset = [(rng.randn(2, 6, 6).astype(numpy.float32), numpy.int32(i % 3))
               for i in range(7)]
    model = _LazyNet().to_device(main_device)
    optimizer = optimizers.MomentumSGD(lr=0.5).setup(model)
    updater = make_updater(SerialIterator(dataset, 7, shuffle=False), optimizer)
    updater.update()
    return {path: backend.to_numpy(p.array) for path, p in model.namedparams()}, updater


@pytest.mark.parametrize('devices', [
    {'main': 'cpu', 'second': 'cpu'}, {'main': 'cuda:1', 'second': 'cuda:0'},
], ids=['cpu', 'main_on_the_second_gpu'])
def test_lazily_shaped_model_first_step_equals_the_one_device_step(devices, request):
    if 'cuda:1' in devices.values():
        request.getfixturevalue('two_gpus')  # skips without two GPUs
    main = devices['main']
    expected, _ = _one_lazy_step(
        lambda it, opt: StandardUpdater(it, opt, device=main), main)
    params, updater = _one_lazy_step(
        lambda it, opt: ParallelUpdater(it, opt, devices=devices), main)
    assert set(params) == {'/conv/W', '/conv/b', '/fc/W', '/fc/b'}
    for path, array in params.items():
        numpy.testing.assert_allclose(array, expected[path], rtol=1e-5, atol=1e-6,
                                      err_msg=path)
    second = updater.models['second']
    for path, param in second.namedparams():
        assert param.device == backend.get_device(devices['second']), path
        numpy.testing.assert_array_equal(backend.to_numpy(param.array), params[path])
