import math

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

_erf = numpy.vectorize(math.erf)


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + numpy.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def test_gelu_exact(rng):
    x = rng.normal(size=(3, 4)) * 3
    check_function(F.gelu, (x,), _gelu, double_backward=True)


def test_gelu_exact_over_a_wide_range():
    x = numpy.linspace(-12, 12, 4001)
    numpy.testing.assert_allclose(F.gelu(x).array, _gelu(x), rtol=1e-12, atol=1e-14)


def test_gelu_tanh(rng):
    x = rng.normal(size=(3, 4)) * 3
    check_function(lambda x: F.gelu(x, approximate='tanh'), (x,), _gelu_tanh,
                   double_backward=True)


def test_gelu_bad_approximate():
    with pytest.raises(ValueError, match='approximate'):
        F.gelu(numpy.zeros(2), approximate='sigmoid')
