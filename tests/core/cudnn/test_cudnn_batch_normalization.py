"""Batch normalisation through cvzoo.core.cudnn on the CuPy stand-in with a fake frontend."""

import numpy
import pytest

from cvzoo.core import using_config
from cvzoo.core.functions.math.sum import sum as sum_
from cvzoo.core.functions.normalization.batch_normalization import batch_normalization
from cvzoo.core.functions.normalization.fixed_batch_normalization import fixed_batch_normalization
from cvzoo.core.variable import Variable


def _operations(module):
    return [e['operation'] for e in module.log if e['event'] == 'execute']


def _inputs(stand_in, shape=(4, 3, 5, 6)):
    rng = numpy.random.default_rng(1)
    x = stand_in.asarray((rng.standard_normal(shape) * 2 + 1).astype(numpy.float32))
    gamma = stand_in.asarray(rng.uniform(0.5, 1.5, shape[1]).astype(numpy.float32))
    beta = stand_in.asarray(rng.standard_normal(shape[1]).astype(numpy.float32))
    gy = stand_in.asarray(rng.standard_normal(shape).astype(numpy.float32))
    return x, gamma, beta, gy


def _train_step(stand_in, x, gamma, beta, gy):
    running_mean = stand_in.asarray(numpy.full(gamma.shape, 0.5, numpy.float32))
    running_var = stand_in.asarray(numpy.ones(gamma.shape, numpy.float32))
    xv, gv, bv = Variable(x), Variable(gamma), Variable(beta)
    y = batch_normalization(xv, gv, bv, running_mean=running_mean, running_var=running_var,
                            decay=0.8)
    sum_(y * Variable(gy, requires_grad=False)).backward()
    return y.array, xv.grad, gv.grad, bv.grad, running_mean, running_var


def test_training_runs_cudnn_with_the_cupy_results(fake_cudnn, stand_in):
    inputs = _inputs(stand_in)
    with using_config('use_cudnn', 'never'):
        expected = _train_step(stand_in, *inputs)
    assert fake_cudnn.log == []
    got = _train_step(stand_in, *inputs)
    assert _operations(fake_cudnn) == ['batchnorm', 'batchnorm_backward']
    for name, e, g in zip(('y', 'gx', 'ggamma', 'gbeta', 'running_mean', 'running_var'),
                          expected, got):
        assert g.shape == e.shape, name
        numpy.testing.assert_allclose(g.get(), e.get(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_training_without_running_arrays(fake_cudnn, stand_in):
    x, gamma, beta, _ = _inputs(stand_in)
    with using_config('use_cudnn', 'never'):
        expected = batch_normalization(x, gamma, beta).array
    got = batch_normalization(x, gamma, beta).array
    numpy.testing.assert_allclose(got.get(), expected.get(), rtol=1e-4, atol=1e-5)
    assert _operations(fake_cudnn) == ['batchnorm']


def test_inference_with_running_statistics_runs_cudnn(fake_cudnn, stand_in):
    x, gamma, beta, _ = _inputs(stand_in)
    mean = stand_in.asarray(numpy.array([0.5, -1.0, 2.0], numpy.float32))
    var = stand_in.asarray(numpy.array([1.5, 0.25, 4.0], numpy.float32))
    with using_config('use_cudnn', 'never'):
        expected = fixed_batch_normalization(x, gamma, beta, mean, var).array
    got = fixed_batch_normalization(x, gamma, beta, mean, var).array
    assert _operations(fake_cudnn) == ['batchnorm_inference']
    numpy.testing.assert_allclose(got.get(), expected.get(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('case', ['axis', 'ndim'])
def test_other_layouts_take_the_cupy_path(fake_cudnn, stand_in, case):
    x, gamma, beta, _ = _inputs(stand_in)
    if case == 'axis':  # normalised over (0, 1, 3): gamma covers axis 2
        gamma, beta = gamma[:1].repeat(5), beta[:1].repeat(5)
        batch_normalization(x, gamma, beta, axis=(0, 1, 3))
    else:
        batch_normalization(x.reshape(4, 3, 30), gamma, beta)
    assert fake_cudnn.log == []
