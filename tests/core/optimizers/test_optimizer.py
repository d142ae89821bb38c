"""Optimizer base: setup, update(lossfun), hooks, hyperparameters, state, serialization."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo import errors
from cvzoo.core import initializers
from cvzoo.core.links.link import Chain, ChainList, Link
from cvzoo.core.optimizers import adam, hooks, momentum_sgd, rmsprop, sgd
from cvzoo.core.serializers import hdf5, npz
from cvzoo.core.variable import Parameter


class Affine(Link):
    def __init__(self, n_in, n_out):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializers.Normal(0.5), (n_out, n_in))
            self.b = Parameter(initializers.Zero(), (n_out,))

    def forward(self, x):
        return x @ self.W.T + F.broadcast_to(self.b, (x.shape[0], self.b.shape[0]))


class Net(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.fc = Affine(3, 4)
            self.blocks = ChainList(Affine(4, 2))

    def forward(self, x):
        return self.blocks[0](F.exp(self.fc(x) * 0.1))


def _loss(net, x):
    y = net(x)
    return F.sum(y * y)


def _data():
    return numpy.random.RandomState(1).uniform(-1, 1, (5, 3)).astype(numpy.float32)


def test_update_with_lossfun_clears_grads_and_counts():
    numpy.random.seed(0)
    net = Net()
    optimizer = sgd.SGD(lr=0.1).setup(net)
    for p in net.params():
        p.grad = numpy.full(p.shape, 1e6, dtype=p.dtype)
    before = net.fc.W.array.copy()
    optimizer.update(_loss, net, _data())
    assert optimizer.t == 1
    assert numpy.abs(net.fc.W.array - before).max() < 1.0
    assert all(p.update_rule.t == 1 for p in net.params())


def test_params_without_grad_are_skipped():
    net = Net()
    optimizer = momentum_sgd.MomentumSGD().setup(net)
    net.fc.W.grad = numpy.ones_like(net.fc.W.array)
    before = net.fc.b.array.copy()
    optimizer.update()
    numpy.testing.assert_array_equal(net.fc.b.array, before)
    assert net.fc.b.update_rule.state is None and net.fc.b.update_rule.t == 0
    assert net.fc.W.update_rule.state['v'].shape == (4, 3)


def test_disable_update_freezes():
    net = Net()
    optimizer = sgd.SGD().setup(net)
    net.fc.disable_update()
    for p in net.params():
        p.grad = numpy.ones_like(p.array)
    before = net.fc.W.array.copy()
    optimizer.update()
    numpy.testing.assert_array_equal(net.fc.W.array, before)
    assert not numpy.array_equal(net.blocks[0].W.array, numpy.zeros(1))
    net.fc.enable_update()
    optimizer.update()
    assert not numpy.array_equal(net.fc.W.array, before)


def test_hyperparameter_overridden_per_rule():
    net = Net()
    optimizer = sgd.SGD(lr=0.1).setup(net)
    net.fc.W.update_rule.hyperparam.lr = 0.0
    for p in net.params():
        p.grad = numpy.ones_like(p.array)
    before = net.fc.W.array.copy()
    optimizer.lr = 1.0
    optimizer.update()
    numpy.testing.assert_array_equal(net.fc.W.array, before)
    numpy.testing.assert_allclose(net.fc.b.array, -1.0)


def test_hooks_run_in_order_with_timing():
    net = Net()
    optimizer = sgd.SGD().setup(net)
    calls = []
    optimizer.add_hook(lambda opt: calls.append(('post', opt.t)), name='after', timing='post')
    optimizer.add_hook(lambda opt: calls.append(('pre', opt.t)), name='before')
    optimizer.update()
    assert calls == [('pre', 0), ('post', 1)]
    with pytest.raises(KeyError):
        optimizer.add_hook(lambda opt: None, name='before')
    with pytest.raises(ValueError, match='timing'):
        optimizer.add_hook(lambda opt: None, name='x', timing='later')
    optimizer.remove_hook('before')
    optimizer.update()
    assert calls[-1] == ('post', 2)


def test_new_epoch_and_setup_check():
    optimizer = sgd.SGD()
    with pytest.raises(RuntimeError, match='setup'):
        optimizer.update()
    optimizer.setup(Net())
    optimizer.new_epoch()
    assert optimizer.epoch == 1


def test_lazy_parameter_gets_a_rule_after_setup():
    link = Link()
    link.add_param('W')
    optimizer = momentum_sgd.MomentumSGD().setup(link)
    link.W.initialize((2,))
    link.W.array[...] = 1
    link.W.grad = numpy.ones(2, dtype=numpy.float32)
    optimizer.update()
    numpy.testing.assert_allclose(link.W.array, 0.99)


def test_state_moves_with_link(device):
    net = Net()
    optimizer = adam.Adam().setup(net)
    net.fc.W.grad = numpy.ones_like(net.fc.W.array)
    optimizer.update()
    net.to_device(device)
    assert isinstance(net.fc.W.update_rule.state['m'], net.xp.ndarray)


def _train(net, optimizer, steps):
    for _ in range(steps):
        optimizer.update(_loss, net, _data())


@pytest.mark.parametrize('save, load', [(npz.save_npz, npz.load_npz),
                                        (hdf5.save_hdf5, hdf5.load_hdf5)], ids=['npz', 'hdf5'])
@pytest.mark.parametrize('make_optimizer', [
    lambda: momentum_sgd.MomentumSGD(lr=0.05),
    lambda: adam.Adam(alpha=0.01, amsgrad=True),
], ids=['momentum', 'amsgrad'])
def test_resume_matches_uninterrupted_training(tmp_path, save, load, make_optimizer):
    numpy.random.seed(0)
    reference = Net()
    resumed = reference.copy('copy')
    optimizer = make_optimizer().setup(reference)
    _train(reference, optimizer, 3)
    optimizer.new_epoch()
    save(tmp_path / 'model', reference)
    save(tmp_path / 'optimizer', optimizer)
    _train(reference, optimizer, 2)

    fresh = make_optimizer().setup(resumed)
    load(tmp_path / 'model', resumed)
    load(tmp_path / 'optimizer', fresh)
    assert (fresh.t, fresh.epoch) == (3, 1)
    _train(resumed, fresh, 2)
    for (_, p), (_, q) in zip(reference.namedparams(), resumed.namedparams()):
        numpy.testing.assert_array_equal(p.array, q.array)


def test_optimizer_file_keys(tmp_path):
    net = Net()
    optimizer = adam.Adam().setup(net)
    _train(net, optimizer, 1)
    npz.save_npz(tmp_path / 'opt.npz', optimizer)
    with numpy.load(tmp_path / 'opt.npz') as data:
        assert {'t', 'epoch', 'fc/W/t', 'fc/W/m', 'fc/W/v', 'blocks/0/b/m'} <= set(data.files)


BAD_HYPERPARAMETERS = {
    'sgd_lr_nan': (lambda: sgd.SGD(lr=float('nan')), 'lr'),
    'momentum_sgd_lr_negative': (lambda: momentum_sgd.MomentumSGD(lr=-1), 'lr'),
    'momentum_above_1': (lambda: momentum_sgd.MomentumSGD(momentum=1.5), 'momentum'),
    'adam_alpha_inf': (lambda: adam.Adam(alpha=float('inf')), 'alpha'),
    'adam_beta2_negative': (lambda: adam.Adam(beta2=-0.1), 'beta2'),
    'adam_eps_nan': (lambda: adam.Adam(eps=float('nan')), 'eps'),
    'adamw_weight_decay_negative': (lambda: adam.AdamW(weight_decay_rate=-0.01),
                                    'weight_decay_rate'),
    'rmsprop_alpha_above_1': (lambda: rmsprop.RMSprop(alpha=1.5), 'alpha'),
    'weight_decay_nan': (lambda: hooks.WeightDecay(float('nan')), 'rate'),
}


@pytest.mark.parametrize('case', list(BAD_HYPERPARAMETERS), ids=list(BAD_HYPERPARAMETERS))
def test_bad_hyperparameters_are_refused_at_construction(case):
    make, name = BAD_HYPERPARAMETERS[case]
    with pytest.raises(errors.UsageError, match=f'^{name}: expected a finite number'):
        make()


def test_bad_hyperparameters_are_refused_when_set_later():
    optimizer = momentum_sgd.MomentumSGD(lr=0.1).setup(Net())
    for value in (float('nan'), float('inf'), -0.5):
        with pytest.raises(errors.UsageError, match='^lr: '):
            optimizer.lr = value
    rule = next(optimizer.target.params()).update_rule
    with pytest.raises(errors.UsageError, match='^momentum: '):
        rule.hyperparam.momentum = 2.0
    assert optimizer.lr == 0.1 and rule.hyperparam.momentum == 0.9
    optimizer.lr = 0.0  # a schedule may reach zero
    adam.Adam(alpha=10.0, amsgrad=True)  # a large step size and a flag are fine
