"""Several devices: current-device rules, the d2l helpers, model parallelism, own kernels.

These run on two GPUs: real ones, or the CuPy stand-in's under ``pytest --fake-cuda``.
"""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo import errors
from cvzoo.core import backend, backprop, links as L, optimizers
from cvzoo.core.variable import Parameter, Variable


def _current_id():
    return backend.get_device('cuda:0').xp.cuda.Device().id


class _SmallNet(L.Chain if hasattr(L, 'Chain') else object):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(3, 4, 3, pad=1)
            self.bn = L.BatchNormalization(4)
            self.fc = L.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        h = F.relu(self.bn(self.conv(x)))
        h = F.max_pooling_2d(h, 2)
        return self.fc(h)


def _net_and_batch(rng):
    numpy.random.seed(0)
    net = _SmallNet()
    x = rng.standard_normal((4, 3, 8, 8)).astype(numpy.float32)
    t = rng.integers(0, 5, 4).astype(numpy.int32)
    return net, x, t


def _loss(net, x, t):
    return F.softmax_cross_entropy(net(x), t)


def test_use_makes_the_device_current_and_with_scopes_it(two_gpus):
    gpu0, gpu1 = two_gpus
    gpu0.use()
    with gpu1:
        assert _current_id() == 1
        with gpu0:
            assert _current_id() == 0
        assert _current_id() == 1
    assert _current_id() == 0
    assert gpu1.use() is gpu1
    assert _current_id() == 1
    gpu0.use()


def test_d2l_helpers(two_gpus):
    assert backend.num_gpus() == 2
    assert str(backend.try_gpu()) == 'cuda:0'
    assert str(backend.try_gpu(1)) == 'cuda:1'
    assert str(backend.try_gpu(2)) == 'cpu'
    assert [str(d) for d in backend.try_all_gpus()] == ['cuda:0', 'cuda:1']


def test_d2l_helpers_without_gpu(monkeypatch):
    monkeypatch.setattr(backend, 'is_cuda_available', lambda: False)
    assert backend.num_gpus() == 0
    assert str(backend.try_gpu()) == 'cpu'
    assert [str(d) for d in backend.try_all_gpus()] == ['cpu']


def test_training_on_the_second_gpu_equals_the_cpu(two_gpus, rng):
    net, x, t = _net_and_batch(rng)
    twin = net.copy(mode='copy')
    results = []
    for model, device in ((twin, 'cpu'), (net, 'cuda:1')):
        backend.get_device('cuda:0').use()  # GPU 0 current, as in a fresh process
        model.to_device(device)
        optimizer = optimizers.MomentumSGD(lr=0.1).setup(model)
        for _ in range(2):
            optimizer.update(_loss, model, backend.to_device(x, device),
                             backend.to_device(t, device))
        assert model.conv.W.device == backend.get_device(device)
        assert backend.get_device_from_array(model.bn.avg_mean) == backend.get_device(device)
        results.append({path: backend.to_numpy(p.array) for path, p in model.namedparams()})
    for path, value in results[0].items():
        numpy.testing.assert_allclose(results[1][path], value, rtol=1e-5, atol=1e-6,
                                      err_msg=path)


def test_model_parallelism_with_copy(two_gpus, rng):
    first = L.Linear(6, 5).to_device('cuda:0')
    second = L.Linear(5, 3).to_device('cuda:1')
    x = rng.standard_normal((2, 6)).astype(numpy.float32)
    h = first(backend.to_device(x, 'cuda:0'))
    y = second(F.copy(h, 'cuda:1'))
    F.sum(y).backward()
    assert y.device == backend.Device('cuda:1')
    assert first.W.grad is not None and first.W.device == backend.Device('cuda:0')
    assert backend.get_device_from_array(first.W.grad) == backend.Device('cuda:0')
    reference = L.Linear(6, 5)
    reference.copyparams(first)
    expected = backend.to_numpy(first.W.grad)
    reference_second = L.Linear(5, 3)
    reference_second.copyparams(second)
    F.sum(reference_second(reference(x))).backward()
    numpy.testing.assert_allclose(expected, reference.W.grad, rtol=1e-5, atol=1e-6)


def test_mixing_devices_names_both(two_gpus):
    a = backend.to_device(numpy.ones(3, numpy.float32), 'cuda:0')
    b = backend.to_device(numpy.ones(3, numpy.float32), 'cuda:1')
    with pytest.raises(errors.DeviceMismatchError, match='cuda:0 and cuda:1'):
        F.add(a, b)
    with pytest.raises(errors.DeviceMismatchError, match='cpu and cuda:0'):
        F.add(numpy.ones(3, numpy.float32), a)


def test_copyparams_and_addgrads_across_devices(two_gpus, rng):
    src = L.Linear(3, 2).to_device('cuda:1')
    dst = L.Linear(3, 2).to_device('cuda:0')
    dst.copyparams(src)
    numpy.testing.assert_array_equal(backend.to_numpy(dst.W.array),
                                     backend.to_numpy(src.W.array))
    x = backend.to_device(rng.standard_normal((2, 3)).astype(numpy.float32), 'cuda:1')
    F.sum(src(x)).backward()
    dst.addgrads(src)
    dst.addgrads(src)
    numpy.testing.assert_allclose(backend.to_numpy(dst.W.grad),
                                  2 * backend.to_numpy(src.W.grad))
    assert dst.W.grad.device.id == 0


def test_host_side_arguments_are_moved_once(two_gpus, rng):
    x = backend.to_device(rng.standard_normal((4, 3)).astype(numpy.float32), 'cuda:1')
    t = backend.to_device(numpy.array([0, 1, 2, 1], numpy.int32), 'cuda:1')
    weight = numpy.array([1.0, 2.0, 0.5], numpy.float32)
    loss = F.softmax_cross_entropy(x, t, class_weight=weight)
    expected = F.softmax_cross_entropy(backend.to_numpy(x), backend.to_numpy(t),
                                       class_weight=weight)
    numpy.testing.assert_allclose(float(loss.array), float(expected.array), rtol=1e-6)
    pooled, indexes = F.max_pooling_2d(numpy.ones((1, 1, 4, 4), numpy.float32), 2,
                                       return_indices=True)
    up = F.upsampling_2d(backend.to_device(pooled.array, 'cuda:1'), indexes, 2)
    assert up.device == backend.Device('cuda:1')


def test_out_of_range_label_on_a_gpu_gives_nan_not_a_number(two_gpus):
    x = backend.to_device(numpy.zeros((2, 3), numpy.float32), 'cuda:0')
    t = backend.to_device(numpy.array([0, 7], numpy.int32), 'cuda:0')
    assert numpy.isnan(float(F.softmax_cross_entropy(x, t).array))
    with pytest.raises(ValueError, match='labels of t'):
        F.softmax_cross_entropy(numpy.zeros((2, 3), numpy.float32), numpy.array([0, 7]))


# --- waiting, timing, streams, 'cuda', arrays made on a device ----------------------

def _stream_of(device_id):
    cuda = backend.get_device('cuda:0').xp.cuda
    with cuda.Device(device_id):
        return cuda.get_current_stream()


def test_synchronize_waits_for_the_named_device(stand_in, two_gpus):
    cuda = backend.get_device('cuda:0').xp.cuda
    backend.get_device('cuda:0').use()
    with cuda.Device(1):
        start, end = cuda.Event(), cuda.Event()
        start.record()
        end.record()
    backend.synchronize('cuda:0')
    with pytest.raises(cuda.runtime.CUDARuntimeError, match='NotReady'):
        cuda.get_elapsed_time(start, end)  # cuda:1 was not waited for
    with stand_in.count_syncs() as syncs:
        backend.synchronize('cuda:1')
    assert [kind for kind, _ in syncs] == ['synchronize']  # one host synchronisation
    assert cuda.get_elapsed_time(start, end) >= 0
    with cuda.Device(1):
        start.record()
        end.record()
        backend.synchronize()  # None: the current GPU
    assert cuda.get_elapsed_time(start, end) >= 0
    with stand_in.count_syncs() as syncs:
        backend.get_device('cuda:1').synchronize()
        backend.synchronize('cpu')  # nothing to wait for
    assert [kind for kind, _ in syncs] == ['synchronize']


def test_timer_times_the_block_on_its_device(gpu_pair):
    import time

    from cvzoo.testing import cupy_stand_in

    current, target = gpu_pair
    current.use()
    x = backend.to_device(numpy.ones((64, 64), numpy.float32), target)
    with cupy_stand_in.count_syncs() as syncs:
        with backend.timer(target) as t:  # events of cuda:1 while cuda:0 is current
            assert t.elapsed_ms is None
            with target:
                y = x @ x
            time.sleep(0.02)  # the end event is queued 20 ms after the start event
    if cupy_stand_in.is_installed():
        assert [kind for kind, _ in syncs] == ['synchronize']  # waits once, at the end
    assert isinstance(t.elapsed_ms, float) and t.elapsed_ms >= 19
    assert t.device == target and y.shape == (64, 64)
    with target:
        assert backend.timer().device == target  # None: the current GPU


def test_timer_on_the_cpu_and_after_an_error(stand_in):
    import time

    with stand_in.count_syncs() as syncs:
        with backend.timer('cpu') as t:
            time.sleep(0.01)
    assert not syncs and t.elapsed_ms >= 10
    with pytest.raises(ZeroDivisionError):
        with backend.timer('cpu') as t:
            1 / 0
    assert t.elapsed_ms is None


def test_stream_runs_the_block_on_a_new_stream_of_its_device(gpu_pair, rng):
    current, target = gpu_pair
    current.use()
    null = _stream_of(target.id)
    x = backend.to_device(rng.standard_normal((4, 3)).astype(numpy.float32), target)
    link = L.Linear(3, 2).to_device(target)
    with target.stream() as stream:
        assert _current_id() == target.id and _stream_of(target.id) is stream
        assert stream != null and stream.device_id == target.id
        assert backend.current_stream_handle() == stream.ptr  # where NCCL queues its calls
        y = link(x)
        with backend.timer(target) as t:  # timed on the block's stream
            F.sum(y).backward()
    stream.synchronize()
    assert _current_id() == current.id and _stream_of(target.id) == null
    assert t.elapsed_ms >= 0 and y.device == target
    assert backend.get_device_from_array(link.W.grad) == target
    with target.stream(stream) as again:  # a given stream is made current again
        assert again is stream and _stream_of(target.id) is stream


def test_stream_refuses_a_stream_of_another_device(two_gpus):
    gpu0, gpu1 = two_gpus
    with gpu0.stream() as stream_of_gpu0:
        pass
    with pytest.raises(errors.DeviceMismatchError, match='stream: it was made on cuda:0, '
                                                        'not on cuda:1'):
        with gpu1.stream(stream_of_gpu0):
            pass
    assert _current_id() == 0


def test_stream_on_the_cpu_runs_the_block():
    with backend.get_device('cpu').stream() as stream:
        assert stream is None
    with pytest.raises(errors.UsageError, match='stream: the CPU has no streams'):
        with backend.get_device('cpu').stream(object()):
            pass


def test_cuda_is_the_current_gpu(two_gpus, rng):
    gpu0, gpu1 = two_gpus
    gpu0.use()
    assert backend.get_device('cuda') == gpu0
    with gpu1:
        assert backend.get_device('cuda') == gpu1
        x = backend.to_device(rng.standard_normal((2, 3)).astype(numpy.float32), 'cuda')
        link = L.Linear(3, 2).to_device('cuda')
        assert link.device == gpu1 and link(x).device == gpu1
    assert backend.get_device_from_array(x) == gpu1


@pytest.mark.parametrize('make, value', [
    (lambda device: backend.zeros((2, 3), device=device), 0.0),
    (lambda device: backend.ones((2, 3), device=device), 1.0),
    (lambda device: backend.full((2, 3), 2.5, device=device), 2.5),
    (lambda device: backend.empty((2, 3), device=device), None),
], ids=['zeros', 'ones', 'full', 'empty'])
def test_arrays_made_directly_on_a_device(two_gpus, monkeypatch, make, value):
    gpu0, gpu1 = two_gpus
    gpu0.use()
    xp = gpu1.xp

    def no_host_copy(*args, **kwargs):
        raise AssertionError('an array made on a device went through host data')

    monkeypatch.setattr(xp, 'asarray', no_host_copy)
    monkeypatch.setattr(xp, 'array', no_host_copy)
    x = make('cuda:1')
    monkeypatch.undo()
    assert backend.get_device_from_array(x) == gpu1 and _current_id() == 0
    assert x.shape == (2, 3) and x.dtype == numpy.float32
    if value is not None:
        numpy.testing.assert_array_equal(backend.to_numpy(x), numpy.full((2, 3), value))


def test_to_device_with_copy_always_copies(two_gpus):
    gpu0, gpu1 = two_gpus
    gpu0.use()
    x = backend.to_device(numpy.arange(3, dtype=numpy.float32), 'cuda:1')
    assert backend.to_device(x, 'cuda:1') is x
    y = backend.to_device(x, 'cuda:1', copy=True)
    assert y is not x and backend.get_device_from_array(y) == gpu1
    with gpu1:
        y += 1  # a copy, not a view
    numpy.testing.assert_array_equal(backend.to_numpy(x), [0, 1, 2])
    z = backend.to_device(x, 'cuda:0', copy=True)
    assert backend.get_device_from_array(z) == gpu0


@pytest.mark.parametrize('mode', ['copy', 'init', 'share'])
def test_link_copy_of_a_second_gpu_link_stays_there(two_gpus, rng, mode):
    gpu0, gpu1 = two_gpus
    gpu0.use()
    net = _SmallNet().to_device('cuda:1')
    copied = net.copy(mode=mode)
    for path, param in copied.namedparams():
        assert backend.get_device_from_array(param.array) == gpu1, path
    assert backend.get_device_from_array(copied.bn.avg_mean) == gpu1
    if mode == 'copy':
        assert copied.conv.W.array is not net.conv.W.array
        assert copied.bn.avg_mean is not net.bn.avg_mean
        numpy.testing.assert_array_equal(backend.to_numpy(copied.conv.W.array),
                                         backend.to_numpy(net.conv.W.array))
    x = backend.to_device(rng.standard_normal((2, 3, 8, 8)).astype(numpy.float32), 'cuda:1')
    assert copied(x).device == gpu1  # the copy's forward runs where the copy says it lives
    assert _current_id() == 0


def test_copyparams_puts_a_new_persistent_on_the_links_device(two_gpus):
    gpu0, gpu1 = two_gpus
    gpu0.use()
    source, target = L.Linear(2, 2), L.Linear(2, 2).to_device('cuda:1')
    source.add_persistent('stats', numpy.arange(3.0))
    target.add_persistent('stats', None)
    source.to_device('cuda:0')
    target.copyparams(source)
    assert backend.get_device_from_array(target.stats) == gpu1
    assert target.stats is not source.stats


# --- one's own kernel -----------------------------------------------------------------

def test_elementwise_kernel_runs_its_twin_on_the_host():
    kernel = backend.elementwise_kernel('T x, T y', 'T z', 'z = x * y + 1', 'test_fma',
                                        lambda x, y: x * y + 1)
    numpy.testing.assert_array_equal(kernel(numpy.array([2.0]), numpy.array([3.0])), [7.0])


def test_elementwise_kernel_name_taken_by_another_kernel():
    backend.elementwise_kernel('T x', 'T y', 'y = x', 'test_taken', lambda x: x)
    with pytest.raises(ValueError, match='test_taken'):
        backend.elementwise_kernel('T x', 'T y', 'y = -x', 'test_taken', lambda x: -x)


def test_elementwise_kernel_on_the_second_gpu(two_gpus):
    kernel = backend.elementwise_kernel('T x, T y', 'T z', 'z = x - y', 'test_sub',
                                        lambda x, y: x - y)
    backend.get_device('cuda:0').use()
    a = backend.to_device(numpy.array([5.0, 1.0]), 'cuda:1')
    b = backend.to_device(numpy.array([2.0, 2.0]), 'cuda:1')
    out = kernel(a, b)
    assert backend.get_device_from_array(out) == backend.Device('cuda:1')
    numpy.testing.assert_array_equal(backend.to_numpy(out), [3.0, -1.0])


def test_elementwise_kernel_updates_given_outputs_in_place(device):
    def twin(g, lr, p, v):
        v *= 0.5
        v -= lr * g
        p += v

    kernel = backend.elementwise_kernel('T g, T lr', 'T p, T v',
                                        'v = 0.5 * v - lr * g; p += v;', 'test_in_place', twin)
    p, v, g = (backend.to_device(numpy.array(a), device)
               for a in ([1.0, 2.0], [0.2, -0.2], [1.0, 4.0]))
    kernel(g, 0.1, p, v)
    numpy.testing.assert_allclose(backend.to_numpy(v), [0.0, -0.5], atol=1e-12)
    numpy.testing.assert_allclose(backend.to_numpy(p), [1.0, 1.5])


@pytest.mark.parametrize('dtype', [numpy.float32, numpy.float64])
def test_reduction_kernel_on_each_device(device, dtype):
    kernel = backend.reduction_kernel(
        'T x, T m', 'T s', '(x - m) * (x - m)', 'a + b', 's = a', '0',
        f'test_sum_sq_dev_{numpy.dtype(dtype).name}',
        lambda x, m, axis, keepdims: ((x - m) ** 2).sum(axis=axis, keepdims=keepdims),
        reduce_type='double' if dtype == numpy.float64 else 'float')
    x = numpy.arange(24, dtype=dtype).reshape(2, 3, 4)
    m = x.mean(axis=(0, 2), keepdims=True)
    out = kernel(backend.to_device(x, device), backend.to_device(m, device), axis=(0, 2),
                 keepdims=True)
    assert out.shape == (1, 3, 1) and out.dtype == dtype
    numpy.testing.assert_allclose(backend.to_numpy(out), ((x - m) ** 2).sum(
        axis=(0, 2), keepdims=True), rtol=1e-6)


def test_reduction_kernel_name_taken_by_another_kernel():
    args = ('T x', 'T s', 'x', 'a + b', 's = a', '0', 'test_reduce_taken')
    backend.reduction_kernel(*args, lambda x, axis, keepdims: x.sum(axis, keepdims=keepdims))
    with pytest.raises(ValueError, match='test_reduce_taken'):
        backend.reduction_kernel('T x', 'T s', 'x * x', *args[3:], lambda x, axis, keepdims: x)


def test_parameter_initialised_on_its_device(two_gpus):
    backend.get_device('cuda:0').use()
    link = L.Linear(None, 3).to_device('cuda:1')
    link(backend.to_device(numpy.ones((2, 4), numpy.float32), 'cuda:1'))
    assert isinstance(link.W, Parameter)
    assert link.W.device == backend.Device('cuda:1')


def test_grad_of_a_second_gpu_graph(two_gpus):
    backend.get_device('cuda:0').use()
    x = Variable(backend.to_device(numpy.array([1.0, 2.0]), 'cuda:1'))
    gx, = backprop.grad([F.sum(x * x)], [x])
    numpy.testing.assert_array_equal(backend.to_numpy(gx.array), [2.0, 4.0])


# --- CuPy's rules and host syncs on hot paths -----------------------------------------

@pytest.mark.parametrize('dtype', [numpy.int64, numpy.uint8, numpy.int16, numpy.bool_,
                                   numpy.float32])
def test_add_at_takes_every_dtype_on_a_gpu(two_gpus, dtype):
    host = numpy.zeros(4, dtype)
    index = numpy.array([0, 0, 3])
    backend.add_at(host, index, numpy.ones(3, dtype))
    device = backend.to_device(numpy.zeros(4, dtype), 'cuda:0')
    backend.add_at(device, backend.to_device(index, 'cuda:0'),
                   backend.to_device(numpy.ones(3, dtype), 'cuda:0'))
    assert device.dtype == dtype
    numpy.testing.assert_array_equal(backend.to_numpy(device), host)


def test_get_item_backward_with_repeated_int64_indexes_on_a_gpu(stand_in, two_gpus):
    x = Variable(backend.to_device(numpy.arange(4.0), 'cuda:0'))
    index = backend.to_device(numpy.array([1, 1, 3], numpy.int64), 'cuda:0')
    with stand_in.count_syncs() as syncs:
        y = F.get_item(x, index)
        F.sum(y).backward()
    assert not syncs, syncs
    numpy.testing.assert_array_equal(backend.to_numpy(x.grad), [0, 2, 0, 1])


def test_select_item_on_a_gpu_makes_no_sync_and_nan_out_of_range(stand_in, two_gpus):
    x = backend.to_device(numpy.arange(6.0).reshape(2, 3), 'cuda:0')
    t = backend.to_device(numpy.array([2, 5], numpy.int32), 'cuda:0')
    with stand_in.count_syncs() as syncs:
        y = F.select_item(x, t)
    assert not syncs, syncs
    out = backend.to_numpy(y.array)
    assert out[0] == 2.0 and numpy.isnan(out[1])


@pytest.mark.parametrize('make_hook', [
    lambda: optimizers.GradientClipping(0.1), lambda: optimizers.WeightDecay(0.1),
    lambda: optimizers.GradientLARS(threshold=1e-3, weight_decay=0.1)],
    ids=['clipping', 'weight_decay', 'lars'])
def test_optimizer_hooks_on_the_second_gpu_make_no_sync(stand_in, two_gpus, make_hook):
    backend.get_device('cuda:0').use()
    link = L.Linear(3, 2).to_device('cuda:1')
    reference = L.Linear(3, 2)
    reference.copyparams(link)
    x = numpy.full((4, 3), 5.0, numpy.float32)
    for model, data in ((link, backend.to_device(x, 'cuda:1')), (reference, x)):
        optimizer = optimizers.SGD(lr=1.0).setup(model)
        optimizer.add_hook(make_hook())
        F.sum(model(data)).backward()
        with stand_in.count_syncs() as syncs:
            optimizer.update()
        if model is link:
            assert not syncs, syncs
    numpy.testing.assert_allclose(backend.to_numpy(link.W.array), reference.W.array,
                                  rtol=1e-6)


def test_softmax_cross_entropy_on_a_gpu_makes_no_sync(stand_in, two_gpus):
    x = Variable(backend.to_device(numpy.zeros((3, 4), numpy.float32), 'cuda:0'))
    t = backend.to_device(numpy.array([0, -1, 3], numpy.int32), 'cuda:0')
    with stand_in.count_syncs() as syncs:
        F.softmax_cross_entropy(x, t).backward()
    assert not syncs, syncs
