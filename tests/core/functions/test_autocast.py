"""Every function autocast touches: output dtypes, gradient dtypes and values in bfloat16
and float16, on the CPU and on cuda:0 (the CuPy stand-in under --fake-cuda).

The low-precision functions get float32 inputs (parameters) and must return the low
dtype; the float32 functions get low-precision inputs (activations) and must return
float32. Gradients reach every input in its own dtype, within the format's tolerance of
the float64 gradient (cvzoo.testing.check_autocast).
"""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import mixed_precision
from cvzoo.testing import check_autocast


@pytest.fixture(params=['bfloat16', 'float16'])
def low(request):
    """The autocast dtype's name; bfloat16 needs ml_dtypes."""
    if request.param == 'bfloat16':
        pytest.importorskip('ml_dtypes')
    return request.param


def _normal(rng, *shape):
    return rng.normal(size=shape)


def _positive(rng, *shape):
    return rng.uniform(0.5, 1.5, size=shape)


# id: (function, inputs from rng)
LOW_PRECISION_CASES = {
    'convolution_2d': (lambda x, W, b: F.convolution_2d(x, W, b, pad=1),
                       lambda r: (_normal(r, 2, 3, 6, 6), _normal(r, 4, 3, 3, 3), _normal(r, 4))),
    'convolution_2d_stride_no_bias': (
        lambda x, W: F.convolution_2d(x, W, stride=2),
        lambda r: (_normal(r, 2, 3, 7, 7), _normal(r, 4, 3, 3, 3))),
    'convolution_2d_groups': (
        lambda x, W, b: F.convolution_2d(x, W, b, pad=1, groups=2),
        lambda r: (_normal(r, 2, 4, 5, 5), _normal(r, 6, 2, 3, 3), _normal(r, 6))),
    'convolution_2d_depthwise': (
        lambda x, W, b: F.convolution_2d(x, W, b, pad=1, groups=4),
        lambda r: (_normal(r, 2, 4, 5, 5), _normal(r, 4, 1, 3, 3), _normal(r, 4))),
    'convolution_2d_depthwise_stride': (
        lambda x, W: F.convolution_2d(x, W, stride=2, groups=4),
        lambda r: (_normal(r, 2, 4, 7, 7), _normal(r, 8, 1, 3, 3))),
    'convolution_2d_1x1': (lambda x, W: F.convolution_2d(x, W),
                           lambda r: (_normal(r, 2, 5, 4, 4), _normal(r, 3, 5, 1, 1))),
    'deconvolution_2d': (
        lambda x, W, b: F.deconvolution_2d(x, W, b, stride=2, pad=1),
        lambda r: (_normal(r, 2, 4, 4, 4), _normal(r, 4, 3, 3, 3), _normal(r, 3))),
    'linear': (F.linear, lambda r: (_normal(r, 3, 7), _normal(r, 5, 7), _normal(r, 5))),
    'linear_flatten': (F.linear, lambda r: (_normal(r, 2, 3, 4), _normal(r, 5, 12))),
    'linear_two_batch_axes': (lambda x, W: F.linear(x, W, n_batch_axes=2),
                              lambda r: (_normal(r, 2, 3, 4), _normal(r, 5, 4))),
    'matmul': (F.matmul, lambda r: (_normal(r, 2, 3, 7), _normal(r, 7, 5))),
    'matmul_transposed': (lambda a, b: F.matmul(a, b, transa=True, transb=True),
                          lambda r: (_normal(r, 7, 3), _normal(r, 5, 7))),
    'matmul_vector': (F.matmul, lambda r: (_normal(r, 7), _normal(r, 2, 7, 3))),
}


@pytest.mark.parametrize('case', LOW_PRECISION_CASES.values(), ids=list(LOW_PRECISION_CASES))
def test_low_precision_function(case, low, rng):
    func, make_inputs = case
    check_autocast(func, make_inputs(rng), low)


def _labels(rng, n_class, *shape):
    return rng.integers(0, n_class, size=shape).astype(numpy.int32)


# id: (function, inputs from rng); every float input arrives in the low dtype
FLOAT32_CASES = {
    'batch_normalization': (F.batch_normalization,
                            lambda r: (_normal(r, 4, 3, 2, 2), _positive(r, 3), _normal(r, 3))),
    'fixed_batch_normalization': (
        F.fixed_batch_normalization,
        lambda r: (_normal(r, 4, 3, 2, 2), _positive(r, 3), _normal(r, 3), _normal(r, 3),
                   _positive(r, 3))),
    'group_normalization': (lambda x, gamma, beta: F.group_normalization(x, 2, gamma, beta),
                            lambda r: (_normal(r, 2, 4, 3, 3), _positive(r, 4), _normal(r, 4))),
    'layer_normalization': (F.layer_normalization,
                            lambda r: (_normal(r, 3, 6), _positive(r, 6), _normal(r, 6))),
    'softmax': (F.softmax, lambda r: (_normal(r, 3, 5),)),
    'log_softmax': (F.log_softmax, lambda r: (_normal(r, 3, 5),)),
    'softmax_cross_entropy': (F.softmax_cross_entropy,
                              lambda r: (_normal(r, 4, 5), _labels(r, 5, 4))),
    'sigmoid_cross_entropy': (F.sigmoid_cross_entropy,
                              lambda r: (_normal(r, 4, 3), _labels(r, 2, 4, 3))),
    'mean_squared_error': (F.mean_squared_error, lambda r: (_normal(r, 3, 4), _normal(r, 3, 4))),
    'absolute_error': (F.absolute_error, lambda r: (_normal(r, 3, 4), _normal(r, 3, 4))),
    'huber_loss': (lambda x, t: F.huber_loss(x, t, 0.5),
                   lambda r: (_normal(r, 3, 4), _normal(r, 3, 4))),
    'smooth_l1_loss': (F.smooth_l1_loss, lambda r: (_normal(r, 3, 4), _normal(r, 3, 4))),
    'sum': (lambda x: F.sum(x, axis=1), lambda r: (_normal(r, 3, 40),)),
    'mean': (F.mean, lambda r: (_normal(r, 3, 40),)),
    'resize_images': (lambda x: F.resize_images(x, (5, 6), align_corners=False),
                      lambda r: (_normal(r, 2, 3, 3, 4),)),
}


def test_cases_cover_the_documented_lists():
    assert sorted(FLOAT32_CASES) == sorted(mixed_precision.FLOAT32_FUNCTIONS)
    covered = {name for name in mixed_precision.LOW_PRECISION_FUNCTIONS
               if any(case.startswith(name) for case in LOW_PRECISION_CASES)}
    assert covered == set(mixed_precision.LOW_PRECISION_FUNCTIONS)


@pytest.mark.parametrize('case', FLOAT32_CASES.values(), ids=list(FLOAT32_CASES))
def test_float32_function(case, low, rng):
    func, make_inputs = case
    check_autocast(func, make_inputs(rng), low, input_dtype='low', output_dtype=numpy.float32)


def test_a_float32_input_stays_float32(low, rng):
    """float32 inputs of a float32 function are not touched (the cast is only upwards)."""
    check_autocast(F.softmax, (_normal(rng, 3, 5),), low, output_dtype=numpy.float32)


@pytest.mark.parametrize('op', [F.add, F.sub, F.mul, F.div], ids=['add', 'sub', 'mul', 'div'])
def test_mixed_operands_promote_to_float32(op, low, rng):
    """A low-precision operand (made inside by a linear) meets a float32 one."""
    def func(x, W, y):
        return op(F.linear(x, W), y)

    inputs = (_normal(rng, 3, 4), _normal(rng, 5, 4), _positive(rng, 3, 5))
    check_autocast(func, inputs, low, output_dtype=numpy.float32)


def test_concat_promotes_to_float32(low, rng):
    def func(x, W, y):
        return F.concat([F.linear(x, W), y], axis=1)

    inputs = (_normal(rng, 3, 4), _normal(rng, 5, 4), _normal(rng, 3, 2))
    check_autocast(func, inputs, low, output_dtype=numpy.float32)


def test_a_small_network(low, rng):
    """conv -> batch norm -> tanh -> average pool -> linear -> softmax cross entropy
    (smooth functions only: a relu or max pooling could switch branches on a rounding)."""
    def func(x, W, gamma, beta, V, t):
        h = F.convolution_2d(x, W, pad=1)
        h = F.average_pooling_2d(F.tanh(F.batch_normalization(h, gamma, beta)), 2)
        return F.softmax_cross_entropy(F.linear(h, V), t)

    inputs = (_normal(rng, 2, 3, 4, 4), _normal(rng, 4, 3, 3, 3), _positive(rng, 4),
              _normal(rng, 4), _normal(rng, 3, 16), _labels(rng, 3, 2))
    check_autocast(func, inputs, low, output_dtype=numpy.float32)
