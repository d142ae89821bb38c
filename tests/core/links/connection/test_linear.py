"""Linear: shapes, lazy input size, initializers, gradients through W and b."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import gradient_check, initializers
from cvzoo.core.links.connection.linear import Linear

if not hasattr(F, 'linear'):
    pytest.skip('F.linear is not available yet', allow_module_level=True)


@pytest.mark.parametrize('in_size, x_shape, n_batch_axes, y_shape', [
    (3, (4, 3), 1, (4, 2)),
    (None, (4, 3), 1, (4, 2)),
    (None, (4, 3, 2), 1, (4, 2)),
    (None, (4, 5, 3), 2, (4, 5, 2)),
    (3, (0, 3), 1, (0, 2)),
], ids=['given', 'lazy', 'lazy-flatten', 'two-batch-axes', 'empty-batch'])
def test_output_shape(in_size, x_shape, n_batch_axes, y_shape):
    link = Linear(in_size, 2)
    x = numpy.random.rand(*x_shape).astype(numpy.float32)
    y = link(x, n_batch_axes=n_batch_axes)
    assert y.shape == y_shape and y.dtype == numpy.float32
    assert link.in_size == int(numpy.prod(x_shape[n_batch_axes:]))


def test_one_argument_means_out_size():
    link = Linear(5)
    assert link.W.array is None and link.b.shape == (5,)
    assert [p for p, _ in link.namedparams()] == ['/W', '/b']


def test_forward_matches_numpy():
    link = Linear(3, 2, initial_bias=initializers.Constant(0.5))
    x = numpy.random.rand(4, 3).astype(numpy.float32)
    numpy.testing.assert_allclose(link(x).array, x @ link.W.array.T + 0.5, rtol=1e-5, atol=1e-6)


def test_default_initializers():
    numpy.random.seed(0)
    link = Linear(400, 300)
    assert abs(link.W.array.std() - numpy.sqrt(1 / 400)) < 0.005
    numpy.testing.assert_array_equal(link.b.array, 0)
    assert Linear(3, 2, nobias=True).b is None
    numpy.testing.assert_array_equal(Linear(2, 2, initialW=numpy.eye(2)).W.array, numpy.eye(2))


@pytest.mark.parametrize('nobias', [False, True], ids=['bias', 'nobias'])
def test_gradient_check(nobias):
    link = Linear(3, 2, nobias=nobias, initial_bias=initializers.Normal(1.0))
    x = numpy.random.randn(4, 3)
    gy = numpy.random.randn(4, 2)
    gradient_check.check_backward(link, x, gy, params=tuple(link.params()))
