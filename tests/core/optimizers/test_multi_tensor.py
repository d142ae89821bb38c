"""The multi-tensor update (all parameters at once) equals the per-parameter update, bit for
bit, with hooks, per-parameter rules, lazy parameters, a loss scaler and a resume."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.core import links as L
from cvzoo.core.links.link import Chain, Link
from cvzoo.core.optimizers import (
    SGD,
    Adam,
    AdamW,
    GradientClipping,
    LossScaler,
    MomentumSGD,
    NesterovAG,
    WeightDecay,
)
from cvzoo.core.serializers import npz

OPTIMIZERS = {
    'sgd': lambda: SGD(lr=0.1),
    'momentum_sgd': lambda: MomentumSGD(lr=0.05, momentum=0.8),
    'adam': lambda: Adam(alpha=0.01),
    'adamw': lambda: AdamW(alpha=0.01, weight_decay_rate=0.1, eta=0.5),
    'amsgrad': lambda: Adam(alpha=0.01, amsgrad=True),
}
SHAPES = {'W': (3, 4), 'b': (4,), 'c': (2, 2, 3), 'd': (5,)}


def _link(device, dtypes=None):
    rng = numpy.random.default_rng(0)
    link = Link()
    for name, shape in SHAPES.items():
        dtype = (dtypes or {}).get(name, numpy.float32)
        link.add_param(name, initializer=rng.standard_normal(shape).astype(dtype))
    return link.to_device(device)


def _set_grads(link, rng, skip=()):
    for name, param in sorted(link.namedparams()):
        grad = rng.standard_normal(param.shape).astype(param.dtype)
        param.grad = None if name in skip else backend.to_device(grad, param.device)


def _train(link, optimizer, steps=4, multi_tensor=True, skip=(), seed=1):
    optimizer.multi_tensor = multi_tensor
    rng = numpy.random.default_rng(seed)
    for _ in range(steps):
        _set_grads(link, rng, skip)
        optimizer.update()
    return _arrays(link)


def _arrays(link):
    out = {}
    for path, param in link.namedparams():
        out[path] = backend.to_numpy(param.array).copy()
        for key, state in (param.update_rule.state or {}).items():
            out[f'{path}/{key}'] = backend.to_numpy(state).copy()
    return out


def _assert_equal(got, want):
    assert sorted(got) == sorted(want)
    for key in want:
        numpy.testing.assert_array_equal(got[key], want[key], err_msg=key)


def _both(make_optimizer, device, prepare=lambda link, optimizer: None, dtypes=None,
          **train):
    runs = []
    for multi_tensor in (True, False):
        link = _link(device, dtypes)
        optimizer = make_optimizer().setup(link)
        prepare(link, optimizer)
        runs.append(_train(link, optimizer, multi_tensor=multi_tensor, **train))
    return runs


@pytest.mark.parametrize('name', sorted(OPTIMIZERS))
def test_equals_the_per_parameter_update_bit_for_bit(name, device):
    got, want = _both(OPTIMIZERS[name], device,
                      dtypes={'c': numpy.float64})  # two groups: float32 and float64
    _assert_equal(got, want)


def test_parameters_become_views_of_one_flat_buffer_per_dtype():
    link = _link('cpu', {'c': numpy.float64})
    _train(link, MomentumSGD().setup(link), steps=1)
    assert link.W.array.base is not None and link.W.array.base is link.b.array.base
    assert link.W.array.base is link.d.array.base and link.c.array.base is not link.W.array.base
    assert link.W.update_rule.state['v'].base is link.b.update_rule.state['v'].base


@pytest.mark.parametrize('hooks', [
    [WeightDecay(0.1)],
    [GradientClipping(0.5), WeightDecay(0.1)],     # the decay is folded
    [WeightDecay(0.1), GradientClipping(0.5)],     # it is not: the clipping reads it
    [WeightDecay(0.1), WeightDecay(0.01)],
], ids=['decay', 'clip-decay', 'decay-clip', 'two-decays'])
def test_hooks_give_the_per_parameter_result(hooks, device):
    def prepare(link, optimizer):
        for i, hook in enumerate(hooks):
            optimizer.add_hook(hook, name=f'hook{i}')

    got, want = _both(OPTIMIZERS['momentum_sgd'], device, prepare)
    _assert_equal(got, want)


def _own_rules(link, optimizer):
    link.b.update_rule.enabled = False
    link.c.update_rule.hyperparam.lr = 0.5
    link.c.update_rule.hyperparam.alpha = 0.05


@pytest.mark.parametrize('name', ['momentum_sgd', 'adam'])
def test_disabled_rules_and_own_hyperparameters_take_the_per_parameter_path(name, device):
    got, want = _both(OPTIMIZERS[name], device, _own_rules, skip={'/d'})
    _assert_equal(got, want)
    link = _link(device)
    before = backend.to_numpy(link.b.array).copy()
    optimizer = OPTIMIZERS[name]().setup(link)
    _own_rules(link, optimizer)
    _train(link, optimizer, steps=2)
    numpy.testing.assert_array_equal(backend.to_numpy(link.b.array), before)
    assert link.W.array.base is not None and link.c.array.base is None


def test_a_parameter_that_leaves_its_group_gets_arrays_of_its_own():
    link = _link('cpu')
    optimizer = MomentumSGD().setup(link)
    _train(link, optimizer, steps=2)
    flat = link.W.array.base
    link.disable_update()
    link.W.update_rule.enabled = True
    _train(link, optimizer, steps=1)
    assert link.b.array.base is not flat and link.b.update_rule.state['v'].base is not flat


def test_a_replaced_array_is_grouped_again_and_updated():
    link = _link('cpu')
    optimizer = SGD(lr=1.0).setup(link)
    _train(link, optimizer, steps=1)
    link.W.array = numpy.zeros((3, 4), dtype=numpy.float32)
    link.W.grad = numpy.ones((3, 4), dtype=numpy.float32)
    for name in 'bcd':
        getattr(link, name).grad = None
    optimizer.update()
    numpy.testing.assert_array_equal(link.W.array, -numpy.ones((3, 4)))


class _Lazy(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.fc1 = L.Linear(None, 5)
            self.fc2 = L.Linear(5, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x))


@pytest.mark.parametrize('name', ['momentum_sgd', 'adam'])
def test_lazily_initialised_parameters_equal_the_per_parameter_update(name, device):
    runs = []
    for multi_tensor in (True, False):
        numpy.random.seed(0)
        xp = backend.get_device(device).xp
        if xp is not numpy:
            xp.random.seed(0)
        model = _Lazy().to_device(device)
        optimizer = OPTIMIZERS[name]().setup(model)
        optimizer.multi_tensor = multi_tensor
        rng = numpy.random.default_rng(0)
        for _ in range(3):
            x = backend.to_device(rng.standard_normal((2, 4)).astype(numpy.float32), device)
            optimizer.update(lambda x, m=model: F.sum(m(x) ** 2), x)
        runs.append(_arrays(model))
    _assert_equal(*runs)


def test_a_skipped_overflow_step_updates_nothing(device):
    def prepare(link, optimizer):
        optimizer.loss_scaler = LossScaler(init_scale=4.0)

    for multi_tensor in (True, False):
        link = _link(device)
        optimizer = MomentumSGD().setup(link)
        prepare(link, optimizer)
        _train(link, optimizer, steps=2, multi_tensor=multi_tensor)
        before = _arrays(link)
        link.W.grad = backend.to_device(numpy.full((3, 4), numpy.inf, numpy.float32), device)
        optimizer.update()
        _assert_equal(_arrays(link), before)
        assert optimizer.loss_scaler.loss_scale == 2.0 and optimizer.t == 2
    got, want = _both(OPTIMIZERS['adam'], device, prepare)
    _assert_equal(got, want)


@pytest.mark.parametrize('name', ['momentum_sgd', 'adam'])
def test_a_resume_from_a_snapshot_continues_bit_for_bit(name, device, tmp_path):
    link = _link(device)
    optimizer = OPTIMIZERS[name]().setup(link)
    want = _train(link, optimizer, steps=5)
    link = _link(device)
    optimizer = OPTIMIZERS[name]().setup(link)
    rng = numpy.random.default_rng(1)
    for _ in range(2):
        _set_grads(link, rng)
        optimizer.update()
    npz.save_npz(tmp_path / 'link.npz', link)
    npz.save_npz(tmp_path / 'optimizer.npz', optimizer)
    link = _link(device)
    optimizer = OPTIMIZERS[name]().setup(link)
    npz.load_npz(tmp_path / 'link.npz', link)
    npz.load_npz(tmp_path / 'optimizer.npz', optimizer)
    for _ in range(3):
        _set_grads(link, rng)
        optimizer.update()
    _assert_equal(_arrays(link), want)


def test_optimizers_without_update_arrays_update_per_parameter():
    link = _link('cpu')
    optimizer = NesterovAG().setup(link)
    _train(link, optimizer, steps=1)
    assert not optimizer.multi_tensor and link.W.array.base is None


def test_the_update_of_many_parameters_is_a_few_kernels(stand_in):
    link = _link('cuda:0')
    optimizer = MomentumSGD().setup(link)
    optimizer.add_hook(WeightDecay(1e-4))
    _train(link, optimizer, steps=1)
    rng = numpy.random.default_rng(2)
    _set_grads(link, rng)
    with stand_in.count_kernels() as kinds:
        optimizer.update()
    # the gather, the decay (a product and a sum) and the fused update; per parameter it
    # was three per parameter (12)
    assert sum(kinds.values()) == 4, kinds


@pytest.mark.parametrize('name', ['momentum_sgd', 'adam'])
def test_the_cpu_update_in_pieces_equals_the_per_parameter_update(name, monkeypatch):
    from cvzoo.core.optimizers import multi_tensor

    monkeypatch.setattr(multi_tensor, 'CPU_PIECE', 5)  # pieces across parameters' bounds

    def prepare(link, optimizer):
        optimizer.add_hook(WeightDecay(0.1))

    got, want = _both(OPTIMIZERS[name], 'cpu', prepare)
    _assert_equal(got, want)
