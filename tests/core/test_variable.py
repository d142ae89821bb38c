import numpy
import pytest

import cvzoo.core as C
import cvzoo.core.functions as F


def test_variable_rejects_lists():
    with pytest.raises(TypeError, match='NumPy or GPU ndarray'):
        C.Variable([1.0, 2.0])


def test_variable_attributes():
    x = C.Variable(numpy.zeros((2, 3), numpy.float32), name='x')
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and len(x) == 2
    assert x.dtype == numpy.float32
    assert 'x' in repr(x)
    assert x.device.name == 'cpu'


def test_operators_with_scalars_keep_dtype():
    x = C.Variable(numpy.ones(3, numpy.float32))
    for y in (x + 1, 1 + x, x - 1, 1 - x, x * 2, 2 * x, x / 2, 2 / x, x ** 2, 2 ** x, -x, abs(x)):
        assert y.dtype == numpy.float32


def test_operators_with_arrays():
    x = C.Variable(numpy.ones(3, numpy.float32))
    a = numpy.arange(3, dtype=numpy.float32)
    numpy.testing.assert_allclose((a + x).array, a + 1)
    numpy.testing.assert_allclose((x * a).array, a)


def test_mixed_dtypes_are_refused_with_names():
    x = C.Variable(numpy.ones(3, numpy.float32))
    with pytest.raises(TypeError, match='float32 and float64'):
        x + numpy.ones(3)


def test_reshape_and_transpose_methods():
    x = C.Variable(numpy.arange(6, dtype=numpy.float32))
    assert x.reshape(2, 3).shape == (2, 3)
    assert x.reshape((3, 2)).T.shape == (2, 3)
    assert x.reshape(1, 2, 3).transpose(2, 0, 1).shape == (3, 1, 2)


def test_parameter_lazy_initialization():
    p = C.Parameter()
    assert not p.is_initialized
    p.initialize((2, 3))
    assert p.shape == (2, 3) and numpy.isnan(p.array).all()


def test_parameter_from_array_and_initializer():
    from cvzoo.core import initializers

    p = C.Parameter(numpy.ones(3, numpy.float32))
    numpy.testing.assert_array_equal(p.array, 1)
    q = C.Parameter(initializers.Constant(2.0), (2,))
    numpy.testing.assert_array_equal(q.array, 2)
    assert q.dtype == numpy.float32


def test_getitem_and_matmul_methods():
    x = C.Variable(numpy.arange(12, dtype=numpy.float32).reshape(3, 4))
    y = x[1:, numpy.array([0, 0, 3])]
    numpy.testing.assert_array_equal(y.array, x.array[1:, [0, 0, 3]])
    z = x @ x.T
    numpy.testing.assert_allclose(z.array, x.array @ x.array.T)
    F.sum(y).backward()
    numpy.testing.assert_array_equal(x.grad[1:, 0], [2, 2])


def test_rmatmul_with_an_array():
    a = numpy.ones((2, 3), numpy.float32)
    x = C.Variable(numpy.ones((3, 4), numpy.float32))
    y = a @ x
    assert isinstance(y, C.Variable) and y.shape == (2, 4)
