"""Initializers: statistics of the random ones, constants, fans, generate_array."""

import numpy
import pytest

from cvzoo.core import initializers


@pytest.mark.parametrize('initializer, std', [
    (initializers.Normal(0.2), 0.2),
    (initializers.LeCunNormal(), numpy.sqrt(1 / 300)),
    (initializers.LeCunNormal(scale=2.0), 2 * numpy.sqrt(1 / 300)),
    (initializers.HeNormal(), numpy.sqrt(2 / 300)),
    (initializers.HeNormal(fan_option='fan_out'), numpy.sqrt(2 / 400)),
    (initializers.GlorotUniform(), numpy.sqrt(6 / 700) / numpy.sqrt(3)),
    (initializers.Uniform(0.3), 0.3 / numpy.sqrt(3)),
], ids=['normal', 'lecun', 'lecun-scale', 'he', 'he-fan-out', 'glorot', 'uniform'])
def test_random_initializers_have_the_right_spread(initializer, std):
    numpy.random.seed(0)
    array = numpy.empty((400, 300), dtype=numpy.float32)
    initializer(array)
    assert abs(array.mean()) < 0.05 * std * 10
    assert abs(array.std() - std) < 0.03 * std
    assert array.dtype == numpy.float32


def test_uniform_bounds():
    array = numpy.empty((50, 40), dtype=numpy.float64)
    initializers.GlorotUniform()(array)
    assert numpy.abs(array).max() <= numpy.sqrt(6 / 90)


def test_fans_of_a_convolution_weight():
    assert initializers.get_fans((8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match='shape'):
        initializers.get_fans((5,))


def test_constants():
    array = numpy.empty((2, 3), dtype=numpy.float32)
    initializers.Constant(numpy.arange(3))(array)
    numpy.testing.assert_array_equal(array, [[0, 1, 2], [0, 1, 2]])
    initializers.Zero()(array)
    assert (array == 0).all()
    initializers.One()(array)
    assert (array == 1).all()


def test_as_initializer():
    assert numpy.isnan(initializers.generate_array(None, (2,))).all()
    numpy.testing.assert_array_equal(initializers.generate_array(2.5, (2,)), 2.5)
    with pytest.raises(TypeError, match='initializer'):
        initializers.as_initializer([1, 2])
    with pytest.raises(ValueError, match='fan_option'):
        initializers.HeNormal(fan_option='fan_avg')


def test_generate_array_dtype_and_device(device):
    array = initializers.generate_array(initializers.One(), (2, 2), device)
    assert array.dtype == numpy.float32
    array = initializers.generate_array(initializers.One(dtype=numpy.float16), (2,), device)
    assert array.dtype == numpy.float16
    array = initializers.generate_array(initializers.One(), (2,), device, dtype=numpy.float64)
    assert array.dtype == numpy.float64


def test_as_initializer_refuses_a_string():
    with pytest.raises(TypeError, match='initializer'):
        initializers.as_initializer('zeros')
