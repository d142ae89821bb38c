"""The functions whose NumPy passes are shared among threads (cvzoo.core.parallel) give
the same values and gradients cut into many small tasks as in one call.

The other function tests use arrays below parallel.MIN_ELEMENTS, so they see one call;
here every pass is cut into tasks of at most 8 elements on two threads.
"""

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import config, gemm, parallel
from cvzoo.core.functions.connection import correlation


def _channel_major(x):
    return numpy.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)


def _forward_and_grads(func, inputs, gy_seed=0):
    """Outputs and input gradients of ``func`` as arrays."""
    from cvzoo.core import Variable  # noqa: PLC0415

    variables = [Variable(x.copy()) for x in inputs]
    y = func(*variables)
    y.grad = numpy.random.default_rng(gy_seed).normal(size=y.shape).astype(y.dtype)
    y.backward()
    return [y.array] + [v.grad for v in variables]


def _threaded_and_serial(monkeypatch, run):
    with monkeypatch.context() as patch:
        patch.setattr(parallel, '_configured_count', lambda: 1)
        serial = run()
    with monkeypatch.context() as patch:
        patch.setattr(parallel, '_configured_count', lambda: 2)
        patch.setattr(parallel, 'MIN_ELEMENTS', 1)
        patch.setattr(parallel, 'TASK_ELEMENTS', 8)
        calls = []
        real_run = parallel.run
        patch.setattr(parallel, 'run', lambda tasks, n=None: (calls.append(len(tasks)),
                                                              real_run(tasks, n))[1])
        threaded = run()
    assert calls and max(calls) > 1, 'the pass was not cut into tasks'
    return serial, threaded


def _assert_same(serial, threaded):
    for a, b in zip(serial, threaded):
        numpy.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('layout', ['c', 'channel_major'])
@pytest.mark.parametrize('name, func, n_inputs', [
    ('relu', F.relu, 1),
    ('add', lambda a, b: a + b, 2),
    ('batch_normalization', lambda x: F.batch_normalization(
        x, numpy.linspace(0.5, 2, 5), numpy.linspace(-1, 1, 5)), 1),
    ('max_pooling_2d', lambda x: F.max_pooling_2d(x, 3, 2, 1), 1),
    ('convolution_2d 3x3', lambda x: F.convolution_2d(
        x, numpy.random.default_rng(1).normal(size=(4, 5, 3, 3)), pad=1), 1),
    ('convolution_2d 3x3 stride 2', lambda x: F.convolution_2d(
        x, numpy.random.default_rng(2).normal(size=(4, 5, 3, 3)), stride=2, pad=1), 1),
])
def test_same_values_and_gradients(monkeypatch, rng, layout, name, func, n_inputs):
    inputs = [rng.normal(size=(3, 5, 7, 6)) for _ in range(n_inputs)]
    if layout == 'channel_major':
        inputs = [_channel_major(x) for x in inputs]
    serial, threaded = _threaded_and_serial(monkeypatch,
                                            lambda: _forward_and_grads(func, inputs))
    _assert_same(serial, threaded)


def test_batch_normalization_running_averages(monkeypatch, rng):
    x = _channel_major(rng.normal(size=(3, 5, 4, 4)))

    def run():
        mean, var = numpy.zeros(5), numpy.ones(5)
        y = F.batch_normalization(x, numpy.ones(5), numpy.zeros(5), running_mean=mean,
                                  running_var=var)
        return y.array, mean, var

    _assert_same(*_threaded_and_serial(monkeypatch, run))


@pytest.mark.parametrize('layout', ['c', 'channel_major'])
@pytest.mark.parametrize('dilate', [1, 2])
def test_convolution_by_kernel_rows(monkeypatch, rng, layout, dilate):
    # Large stride-1 images skip the patch matrix (correlation._correlate_by_kernel_rows);
    # a patch budget of one element sends these small ones that way.
    monkeypatch.setattr(correlation, '_PATCH_BUDGET', 1)
    calls = []
    by_rows = correlation._correlate_by_kernel_rows
    monkeypatch.setattr(correlation, '_correlate_by_kernel_rows',
                        lambda *args: (calls.append(1), by_rows(*args))[1])
    W = rng.normal(size=(4, 5, 3, 3))
    x = rng.normal(size=(3, 5, 7, 6))
    x = _channel_major(x) if layout == 'channel_major' else x
    serial, threaded = _threaded_and_serial(monkeypatch, lambda: _forward_and_grads(
        lambda x: F.convolution_2d(x, W, pad=dilate, dilate=dilate), [x]))
    _assert_same(serial, threaded)
    assert calls


def test_conv2d_bn_activ_inference_in_place(monkeypatch, rng):
    block = L.Conv2DBNActiv(5, 6, 3, 1, 1)
    block.bn.avg_mean = rng.normal(size=6).astype(numpy.float32)
    block.bn.avg_var = rng.uniform(0.5, 2, size=6).astype(numpy.float32)
    x = rng.normal(size=(2, 5, 9, 9)).astype(numpy.float32)

    def run():
        with config.using_config('train', False), config.no_backprop_mode():
            return [block(x).array]

    _assert_same(*_threaded_and_serial(monkeypatch, run))


def test_blocked_matmul_on_real_threads(monkeypatch, rng):
    if gemm.thread_control() is None:
        pytest.skip('NumPy is not on OpenBLAS here')
    monkeypatch.setattr(gemm, 'configured_threads', lambda: 2)
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 0)
    monkeypatch.setattr(gemm, 'MIN_BLOCK', 4)
    a = rng.normal(size=(40, 30)).astype(numpy.float32)
    b = rng.normal(size=(30, 50)).astype(numpy.float32)
    numpy.testing.assert_allclose(gemm.matmul(a, b), a @ b, rtol=1e-5, atol=1e-5)
