"""The cuDNN dispatch of cvzoo.core.cudnn on the CuPy stand-in with a fake frontend.

These prove which path runs and with what (plans, workspace, stream, device), not
cuDNN's numerics: the fake computes with cvzoo's NumPy path (cvzoo.testing.cudnn_stand_in).
"""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import using_config
from cvzoo.core.functions.connection.convolution_2d import convolution_2d
from cvzoo.core.functions.connection.deconvolution_2d import deconvolution_2d
from cvzoo.core.functions.math.sum import sum as sum_
from cvzoo.core.variable import Variable


@pytest.fixture(autouse=True)
def full_float32():
    """Compare in float32: the fake engine rounds float32 operands to TF32 when allowed."""
    with using_config('allow_tf32', False):
        yield


def _executed(module, operation=None):
    return [e for e in module.log if e['event'] == 'execute'
            and (operation is None or e['operation'] == operation)]


def _built(module):
    return [e for e in module.log if e['event'] == 'build']


def _device_arrays(cp, *shapes, dtype=numpy.float32, seed=0):
    rng = numpy.random.default_rng(seed)
    return [cp.asarray(rng.standard_normal(s).astype(dtype)) for s in shapes]


def _conv_and_grads(x, W, b, **kwargs):
    xv, Wv, bv = Variable(x), Variable(W), Variable(b)
    y = convolution_2d(xv, Wv, bv, **kwargs)
    sum_(y * y).backward()
    return y.array, xv.grad, Wv.grad, bv.grad


CONV_CASES = [
    dict(stride=1, pad=1),
    dict(stride=2, pad=1, cover_all=True),
    dict(stride=(2, 1), pad=(0, 2), dilate=2),
    dict(stride=1, pad=1, groups=2),
    dict(stride=1, pad=1, groups=4),  # depthwise
]


@pytest.mark.parametrize('kwargs', CONV_CASES)
def test_convolution_auto_runs_cudnn_with_the_im2col_results(fake_cudnn, stand_in, kwargs):
    groups = kwargs.get('groups', 1)
    x, W, b = _device_arrays(stand_in, (2, 4, 9, 8), (6 if groups < 4 else 4, 4 // groups, 3, 3),
                             (6 if groups < 4 else 4,))
    with using_config('use_cudnn', 'never'):
        expected = _conv_and_grads(x, W, b, **kwargs)
    assert fake_cudnn.log == []
    got = _conv_and_grads(x, W, b, **kwargs)
    # forward: conv_fprop; backward: conv_dgrad (a deconvolution) and conv_wgrad
    assert [len(_executed(fake_cudnn, op)) for op in ('conv_fprop', 'conv_dgrad',
                                                      'conv_wgrad')] == [1, 1, 1]
    for e, g in zip(expected, got):
        assert isinstance(g, stand_in.ndarray)
        numpy.testing.assert_allclose(g.get(), e.get(), rtol=1e-5, atol=1e-5)


def test_deconvolution_with_outsize_runs_conv_dgrad(fake_cudnn, stand_in):
    x, W, b = _device_arrays(stand_in, (2, 4, 5, 5), (4, 3, 3, 3), (3,))

    def run():
        xv, Wv = Variable(x), Variable(W)
        y = deconvolution_2d(xv, Wv, b, stride=2, pad=1, outsize=(10, 10))
        sum_(y * y).backward()
        return y.array, xv.grad, Wv.grad

    with using_config('use_cudnn', 'never'):
        expected = run()
    got = run()
    assert got[0].shape == (2, 3, 10, 10)
    assert len(_executed(fake_cudnn, 'conv_dgrad')) == 1  # the forward
    assert len(_executed(fake_cudnn, 'conv_fprop')) == 1  # gx
    assert len(_executed(fake_cudnn, 'conv_wgrad')) == 1  # gW
    for e, g in zip(expected, got):
        numpy.testing.assert_allclose(g.get(), e.get(), rtol=1e-5, atol=1e-5)


def test_numpy_arrays_never_reach_cudnn_even_with_always(fake_cudnn):
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(numpy.float32)
    W = rng.standard_normal((3, 2, 3, 3)).astype(numpy.float32)
    with using_config('use_cudnn', 'always'):
        y = convolution_2d(x, W, pad=1)
    assert isinstance(y.array, numpy.ndarray)
    assert fake_cudnn.log == []


def test_never_keeps_the_im2col_path(fake_cudnn, stand_in):
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    with using_config('use_cudnn', 'never'):
        convolution_2d(x, W, pad=1)
    assert fake_cudnn.log == []


def test_without_the_frontend_auto_falls_back(no_cudnn, stand_in):
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    y = convolution_2d(x, W, pad=1)
    assert y.shape == (1, 3, 5, 5)


def test_without_the_frontend_always_is_a_usage_error(no_cudnn, stand_in):
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    with using_config('use_cudnn', 'always'), pytest.raises(
            errors.UsageError, match=r"'use_cudnn' is 'always'.*convolution_2d"):
        convolution_2d(x, W, pad=1)


def test_an_unknown_mode_is_a_usage_error(fake_cudnn, stand_in):
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    with using_config('use_cudnn', True), pytest.raises(
            errors.UsageError, match=r"'use_cudnn' must be one of.*got True"):
        convolution_2d(x, W, pad=1)


def test_float64_takes_the_im2col_path(fake_cudnn, stand_in):
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3), dtype=numpy.float64)
    y = convolution_2d(x, W, pad=1)
    assert y.dtype == numpy.float64
    assert fake_cudnn.log == []


def test_a_refused_graph_falls_back_and_is_not_built_again(fake_cudnn, stand_in):
    from cvzoo.core.cudnn import plans

    fake_cudnn.refuse = lambda name, inputs, outputs: name == 'conv_fprop'
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    with using_config('use_cudnn', 'never'):
        expected = convolution_2d(x, W, pad=1).array
    for _ in range(2):
        got = convolution_2d(x, W, pad=1).array
        numpy.testing.assert_allclose(got.get(), expected.get(), rtol=1e-6)
    assert _executed(fake_cudnn) == [] and _built(fake_cudnn) == []
    assert plans.counts['refused'] == 1 and plans.counts['hits'] == 1


def test_plans_are_cached_per_shape_dtype_and_stride(fake_cudnn, stand_in):
    x, W = _device_arrays(stand_in, (2, 2, 6, 6), (3, 2, 3, 3))
    for _ in range(3):
        convolution_2d(x, W, pad=1)
    assert len(_built(fake_cudnn)) == 1 and len(_executed(fake_cudnn)) == 3
    x2, = _device_arrays(stand_in, (2, 2, 7, 7))  # a new shape
    convolution_2d(x2, W, pad=1)
    assert len(_built(fake_cudnn)) == 2
    convolution_2d(x.astype(numpy.float16), W.astype(numpy.float16), pad=1)  # a new dtype
    assert len(_built(fake_cudnn)) == 3
    channel_major = stand_in.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    y = convolution_2d(channel_major, W, pad=1)  # x's strides differ
    assert len(_built(fake_cudnn)) == 4
    numpy.testing.assert_allclose(y.array.get(), convolution_2d(x, W, pad=1).array.get(),
                                  rtol=1e-6)
    assert len(_built(fake_cudnn)) == 4  # a hit again


def test_benchmark_times_every_plan_once_per_key(fake_cudnn, stand_in):
    from cvzoo.core.cudnn import plans
    from cvzoo.testing import cudnn_stand_in

    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    with using_config('cudnn_benchmark', True):
        for _ in range(3):
            convolution_2d(x, W, pad=1)
    assert [b['policy'] for b in _built(fake_cudnn)] == ['ALL']
    indexes = [e['index'] for e in _executed(fake_cudnn)]
    # each plan timed once, then the chosen one for the call and the two later calls
    assert indexes[:cudnn_stand_in.N_PLANS] == list(range(cudnn_stand_in.N_PLANS))
    assert len(indexes) == cudnn_stand_in.N_PLANS + 3
    assert len(set(indexes[cudnn_stand_in.N_PLANS:])) == 1
    assert plans.counts['benchmarks'] == 1


def test_deterministic_and_tf32_switches_deselect_engines(fake_cudnn, stand_in):
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    with using_config('allow_tf32', True):
        convolution_2d(x, W, pad=1)
    with using_config('cudnn_deterministic', True), using_config('allow_tf32', False):
        convolution_2d(x, W, pad=1)
    first, second = _built(fake_cudnn)
    assert first['deselected'] == [] and first['policy'] == 'HEURISTICS_CHOICE'
    assert second['deselected'] == ['NONDETERMINISTIC', 'TENSOR_CORE']


def test_calls_carry_the_current_stream_device_and_pool_workspace(fake_cudnn, stand_in):
    import cupy  # the stand-in

    with cupy.cuda.Device(1):
        x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
        stream = cupy.cuda.Stream()
        with stream:
            y = convolution_2d(x, W, pad=1)
    run, = _executed(fake_cudnn)
    assert run['device'] == 1 and run['stream'] == stream.ptr
    assert run['workspace_size'] == 256 and isinstance(run['workspace'], int)
    assert y.array.device.id == 1


def test_the_cudnn_path_makes_no_host_synchronisation(fake_cudnn, stand_in):
    x, W, b = _device_arrays(stand_in, (2, 4, 6, 6), (3, 4, 3, 3), (3,))
    with stand_in.count_syncs() as syncs:
        _conv_and_grads(x, W, b, pad=1)
    assert sum(syncs.values()) == 0, syncs
    assert len(_executed(fake_cudnn)) == 3


def test_gradient_check_through_cudnn(fake_cudnn, stand_in):
    from cvzoo.core import gradient_check

    x, W, b = _device_arrays(stand_in, (1, 4, 5, 5), (4, 2, 3, 3), (4,))

    def func(x, W, b):
        return convolution_2d(x, W, b, stride=2, pad=1, dilate=1, groups=2)

    gradient_check.check_backward(func, (x, W, b), _device_arrays(stand_in, (1, 4, 3, 3))[0],
                                  dtype=numpy.float32, eps=1e-2, atol=1e-2, rtol=1e-2)
    assert _executed(fake_cudnn, 'conv_dgrad') and _executed(fake_cudnn, 'conv_wgrad')


def test_a_real_frontend_is_ignored_under_the_stand_in(stand_in, monkeypatch):
    import sys
    import types

    from cvzoo.core.cudnn import availability

    monkeypatch.setitem(sys.modules, 'cudnn', types.ModuleType('cudnn'))  # not a stand-in
    availability.forget_frontend()
    try:
        assert availability.frontend() is None
        x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
        assert convolution_2d(x, W, pad=1).shape == (1, 3, 5, 5)
    finally:
        availability.forget_frontend()


def test_the_frontend_answer_follows_the_cupy_module(stand_in, monkeypatch):
    import sys
    import types

    from cvzoo.core.cudnn import availability

    real = types.ModuleType('cudnn')  # not a stand-in
    monkeypatch.setitem(sys.modules, 'cudnn', real)
    availability.forget_frontend()
    try:
        assert availability.frontend() is None  # asked once under the stand-in
        with monkeypatch.context() as patch:
            patch.setitem(sys.modules, 'cupy', types.ModuleType('cupy'))  # a real CuPy
            assert availability.frontend() is real
        assert availability.frontend() is None
    finally:
        availability.forget_frontend()


def test_a_stream_capture_records_the_cudnn_call_and_a_launch_reruns_it(fake_cudnn, stand_in):
    import cupy  # the stand-in

    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    expected = convolution_2d(x, W, pad=1).array.get()  # builds the plan outside the capture
    stream = cupy.cuda.Stream()
    with stream:
        stream.begin_capture()
        y = convolution_2d(x, W, pad=1).array
        graph = stream.end_capture()
    assert numpy.isnan(y.get()).all()  # nothing ran yet: garbage until the launch
    graph.launch()
    numpy.testing.assert_allclose(y.get(), expected, rtol=1e-6)
    x[...] = 0
    graph.launch()  # reruns on the new contents of x
    assert not y.get().any()


def test_benchmark_skips_a_plan_that_fails_to_run(fake_cudnn, stand_in, monkeypatch):
    pygraph = fake_cudnn.pygraph
    original = pygraph.execute_plan_at_index

    def fails_on_plan_0(self, pack, workspace, index, handle=None):
        if index == 0:
            raise RuntimeError('cudnn stand-in: plan 0 did not build')
        return original(self, pack, workspace, index, handle=handle)

    monkeypatch.setattr(pygraph, 'execute_plan_at_index', fails_on_plan_0)
    x, W = _device_arrays(stand_in, (1, 2, 5, 5), (3, 2, 3, 3))
    with using_config('cudnn_benchmark', True):
        y = convolution_2d(x, W, pad=1).array
    with using_config('use_cudnn', 'never'):
        expected = convolution_2d(x, W, pad=1).array
    numpy.testing.assert_allclose(y.get(), expected.get(), rtol=1e-6)
    assert _executed(fake_cudnn)[-1]['index'] in (1, 2)


def test_allow_tf32_lets_float32_convolutions_round_to_tf32(fake_cudnn, stand_in):
    x, W, b = _device_arrays(stand_in, (2, 4, 6, 6), (3, 4, 3, 3), (3,))
    with using_config('use_cudnn', 'never'):
        expected = _conv_and_grads(x, W, b, pad=1)
    exact = _conv_and_grads(x, W, b, pad=1)
    with using_config('allow_tf32', True):
        tf32 = _conv_and_grads(x, W, b, pad=1)
    for e, g, t in zip(expected[:3], exact, tf32):
        numpy.testing.assert_allclose(g.get(), e.get(), rtol=1e-5, atol=1e-5)
        assert not numpy.allclose(t.get(), e.get(), rtol=1e-5, atol=1e-5)
        # within TF32's precision (2 ** -11) of the largest value, summed over the taps
        assert numpy.abs(t.get() - e.get()).max() < 1e-2 * numpy.abs(e.get()).max()
