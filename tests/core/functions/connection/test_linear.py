import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def linear_reference(x, W, b=None, n_batch_axes=1):
    batch_shape = x.shape[:n_batch_axes]
    flat = x.reshape(int(numpy.prod(batch_shape)), W.shape[1])
    y = numpy.zeros((flat.shape[0], W.shape[0]), x.dtype)
    for o in range(W.shape[0]):
        y[:, o] = (flat * W[o]).sum(axis=1)
    if b is not None:
        y += b
    return y.reshape(batch_shape + (W.shape[0],))


# id: (x shape, W shape, n_batch_axes, with bias)
CASES = {
    'matrix': ((3, 4), (5, 4), 1, True),
    'no_bias': ((3, 4), (5, 4), 1, False),
    'flatten_features': ((2, 3, 2), (4, 6), 1, True),
    'two_batch_axes': ((2, 3, 4), (5, 4), 2, True),
    'two_batch_axes_flatten': ((2, 2, 3, 2), (3, 6), 2, False),
    'empty_batch': ((0, 4), (5, 4), 1, True),
    'empty_batch_flatten': ((0, 2, 2), (5, 4), 1, False),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_linear(case, rng):
    x_shape, w_shape, n_batch_axes, with_bias = case
    inputs = [rng.normal(size=x_shape), rng.normal(size=w_shape)]
    if with_bias:
        inputs.append(rng.normal(size=w_shape[0]))
    check_function(lambda *args: F.linear(*args, n_batch_axes=n_batch_axes), tuple(inputs),
                   lambda *args: linear_reference(*args, n_batch_axes=n_batch_axes),
                   double_backward=True)


def test_non_contiguous_input(rng):
    check_function(lambda x, W: F.linear(F.transpose(x), W),
                   (rng.normal(size=(4, 3)), rng.normal(size=(5, 4))),
                   lambda x, W: linear_reference(x.T, W), double_backward=True)


def test_float32_stays_float32(rng):
    y = F.linear(rng.normal(size=(2, 3)).astype(numpy.float32),
                 rng.normal(size=(4, 3)).astype(numpy.float32),
                 numpy.zeros(4, numpy.float32))
    assert y.dtype == numpy.float32


@pytest.mark.parametrize('x_shape,w_shape,b_shape,n_batch_axes,error,words', [
    ((3, 4), (5, 3), None, 1, ValueError, ['W.shape[1]', 'x.shape=(3, 4)']),
    ((3, 4), (5, 4, 1), None, 1, ValueError, ['W must be 2-D']),
    ((3, 4), (5, 4), (4,), 1, ValueError, [r'b must have shape (5,)']),
    ((3, 4), (5, 4), None, 2, ValueError, ['n_batch_axes']),
    ((3, 4), (5, 4), None, 0, ValueError, ['n_batch_axes']),
], ids=['in_size', 'W_rank', 'b_shape', 'n_batch_axes_too_large', 'n_batch_axes_zero'])
def test_bad_arguments(x_shape, w_shape, b_shape, n_batch_axes, error, words):
    x = numpy.zeros(x_shape, numpy.float32)
    W = numpy.zeros(w_shape, numpy.float32)
    b = None if b_shape is None else numpy.zeros(b_shape, numpy.float32)
    with pytest.raises(error) as info:
        F.linear(x, W, b, n_batch_axes=n_batch_axes)
    for word in words:
        assert word in str(info.value)


def test_mixed_dtypes_are_rejected():
    with pytest.raises(TypeError, match='W must be a float array of x.dtype'):
        F.linear(numpy.zeros((2, 3), numpy.float32), numpy.zeros((4, 3), numpy.float64))
