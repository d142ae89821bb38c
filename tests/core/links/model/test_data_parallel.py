"""DataParallel: nn.DataParallel's link over cvzoo's data_parallel, on two devices."""

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend, optimizers
from tests.helpers import toy_models


def _check_equals_one_device(device_ids, rng, batch=5):
    numpy.random.seed(0)
    net = toy_models.ConvNet()
    x = rng.standard_normal((batch, 2, 4, 4)).astype(numpy.float32)
    gy = rng.standard_normal((batch, 4)).astype(numpy.float32)
    plain = net.copy(mode='copy')
    F.sum(plain(x) * gy).backward()

    model = L.DataParallel(net, device_ids=device_ids).to_device(device_ids[0])
    y = model(backend.to_device(x, device_ids[0]))
    F.sum(y * backend.to_device(gy, device_ids[0])).backward()
    assert y.device == backend.get_device(device_ids[0])
    numpy.testing.assert_allclose(backend.to_numpy(y.array), plain(x).array, rtol=1e-5,
                                  atol=1e-6)
    for path, grad in toy_models.host_grads(plain).items():
        numpy.testing.assert_allclose(toy_models.host_grads(model.module)[path], grad, rtol=1e-4,
                                      atol=1e-5, err_msg=path)


def test_on_two_gpus_the_output_and_gradients_equal_one_device(two_gpus, rng):
    _check_equals_one_device(['cuda:0', 'cuda:1'], rng)


def test_on_the_cpu_the_output_and_gradients_equal_one_device(rng):
    _check_equals_one_device(['cpu', 'cpu'], rng)


def test_the_batch_is_split_over_the_devices(two_gpus, monkeypatch):
    seen = []
    net = L.Linear(3, 2).to_device('cuda:0')
    forward = L.Linear.forward

    def record(self, x, *args, **kwargs):
        seen.append((x.shape[0], backend.get_device_from_array(x.array)))
        return forward(self, x, *args, **kwargs)

    monkeypatch.setattr(L.Linear, 'forward', record)
    x = backend.to_device(numpy.ones((5, 3), numpy.float32), 'cuda:0')
    L.DataParallel(net, ['cuda:0', 'cuda:1'])(x)
    assert sorted(seen, key=str) == sorted([(2, two_gpus[0]), (3, two_gpus[1])], key=str)


def test_its_parameters_are_the_modules_and_an_optimizer_updates_them(two_gpus, rng):
    net = L.Linear(3, 2).to_device('cuda:0')
    model = L.DataParallel(net, ['cuda:0', 'cuda:1'], output_device='cuda:1')
    assert [path for path, _ in model.namedparams()] == ['/module/W', '/module/b']
    assert all(p is q for p, q in zip(model.params(), net.params()))
    before = backend.to_numpy(net.W.array).copy()
    optimizer = optimizers.SGD(lr=0.5).setup(model)
    x = backend.to_device(rng.standard_normal((4, 3)).astype(numpy.float32), 'cuda:0')
    optimizer.update(lambda: F.sum(model(x)))
    assert model(x).device == two_gpus[1]
    # d sum(x W^T + b) / dW = the column sums of x, for every output row
    want = before - 0.5 * backend.to_numpy(x).sum(axis=0)
    numpy.testing.assert_allclose(backend.to_numpy(net.W.array), want, rtol=1e-5)


@pytest.mark.parametrize('kwargs,error,words', [
    ({'module': 'model'}, TypeError, 'module must be a Link, got str'),
    ({'device_ids': []}, errors.UsageError, 'device_ids must name at least one device'),
], ids=['not_a_link', 'no_device'])
def test_wrong_arguments_are_named(kwargs, error, words):
    kwargs = {'module': L.Linear(3, 2), **kwargs}
    with pytest.raises(error, match=words):
        L.DataParallel(**kwargs)
