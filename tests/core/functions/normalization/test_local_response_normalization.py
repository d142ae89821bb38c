import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _expected(x, n=5, k=2, alpha=1e-4, beta=0.75):
    half_n = n // 2
    y = numpy.empty_like(x)
    for c in range(x.shape[1]):
        window = x[:, max(c - half_n, 0):c + half_n + 1]
        y[:, c] = x[:, c] / (k + alpha * (window * window).sum(axis=1)) ** beta
    return y


@pytest.mark.parametrize('shape, kwargs', [
    ((2, 7, 3, 3), {}),
    ((2, 4, 3), dict(n=3, k=1.0, alpha=0.5, beta=0.6)),
    ((2, 3, 2), dict(n=7, k=1.0, alpha=0.3)),
], ids=['default', 'strong', 'wide_window'])
def test_local_response_normalization(shape, kwargs, rng):
    x = rng.normal(size=shape)
    check_function(lambda x: F.local_response_normalization(x, **kwargs), (x,),
                   lambda x: _expected(x, **kwargs), double_backward=True)


def test_local_response_normalization_bad_n():
    with pytest.raises(ValueError, match='n must'):
        F.local_response_normalization(numpy.zeros((2, 3, 4)), n=0)
