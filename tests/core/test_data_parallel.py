import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import backend, links as L
from cvzoo.core.data_parallel import data_parallel, gather, parallel_apply, replicate, scatter
from tests.helpers import toy_models


def _check_equals_plain(devices, batch, rng, output_device=None):
    numpy.random.seed(0)
    net = toy_models.ConvNet()
    x = rng.standard_normal((batch, 2, 4, 4)).astype(numpy.float32)
    gy = rng.standard_normal((batch, 4)).astype(numpy.float32)
    plain = net.copy(mode='copy')
    y_plain = plain(x)
    F.sum(y_plain * gy).backward()

    net.to_device(devices[0])
    y = data_parallel(net, backend.to_device(x, devices[0]), devices, output_device)
    out_device = backend.get_device(output_device or devices[0])
    assert y.device == out_device
    F.sum(y * backend.to_device(gy, out_device)).backward()
    numpy.testing.assert_allclose(backend.to_numpy(y.array), y_plain.array, rtol=1e-5,
                                  atol=1e-6)
    for path, grad in toy_models.host_grads(plain).items():
        numpy.testing.assert_allclose(toy_models.host_grads(net)[path], grad, rtol=1e-4, atol=1e-5,
                                      err_msg=path)


@pytest.mark.parametrize('batch', [4, 5, 1], ids=['even', 'uneven', 'smaller_than_devices'])
def test_data_parallel_on_the_cpu_equals_the_plain_forward_and_gradients(batch, rng):
    _check_equals_plain(['cpu', 'cpu', 'cpu'], batch, rng)


@pytest.mark.parametrize('batch', [4, 5], ids=['even', 'uneven'])
def test_data_parallel_on_two_gpus_equals_the_plain_forward_and_gradients(two_gpus, batch,
                                                                          rng):
    _check_equals_plain(['cuda:0', 'cuda:1'], batch, rng)


def test_data_parallel_gathers_on_the_output_device(two_gpus, rng):
    _check_equals_plain(['cuda:0', 'cuda:1'], 4, rng, output_device='cuda:1')


def test_replicas_live_on_their_devices_and_share_values(two_gpus):
    net = L.Linear(3, 2)
    replicas = replicate(net, ['cuda:0', 'cuda:1'])
    for replica, device in zip(replicas, two_gpus):
        assert replica.device == device
        assert backend.get_device_from_array(replica.W.array) == device
        numpy.testing.assert_array_equal(backend.to_numpy(replica.W.array), net.W.array)


def test_scatter_splits_the_batch_and_gather_joins_it(two_gpus):
    x = numpy.arange(10, dtype=numpy.float32).reshape(5, 2)
    parts = scatter(x, ['cuda:0', 'cuda:1'])
    assert [p.shape for p in parts] == [(2, 2), (3, 2)]
    assert [p.device for p in parts] == two_gpus
    joined = gather(parts, 'cpu')
    numpy.testing.assert_array_equal(joined.array, x)


def test_scatter_of_a_tuple_splits_each_item():
    x, t = numpy.zeros((4, 2)), numpy.arange(4)
    parts = scatter((x, t), ['cpu', 'cpu'])
    assert [tuple(item.shape for item in part) for part in parts] == [((2, 2), (2,))] * 2


def test_parallel_apply_runs_each_replica_with_its_device_current(two_gpus):
    seen = []

    class Probe(L.Link):
        def forward(self, x):
            seen.append((str(self.device), self.xp.cuda.Device().id))
            return x

    replicas = [Probe().to_device(d) for d in two_gpus]
    parallel_apply(replicas, [backend.to_device(numpy.ones(1), d) for d in two_gpus])
    assert sorted(seen) == [('cuda:0', 0), ('cuda:1', 1)]


def test_parallel_apply_raises_a_replica_error():
    class Broken(L.Link):
        def forward(self, x):
            raise RuntimeError('replica failed')

    with pytest.raises(RuntimeError, match='replica failed'):
        parallel_apply([Broken(), Broken()], [numpy.ones(1), numpy.ones(1)])


def test_replicate_needs_initialised_parameters():
    with pytest.raises(ValueError, match='W is not initialised'):
        replicate(L.Linear(None, 2), ['cpu'])
