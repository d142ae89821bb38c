import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _expected(x, gamma, beta, groups, eps=1e-5):
    y = numpy.empty_like(x)
    n_per_group = x.shape[1] // groups
    for i in range(x.shape[0]):
        for g in range(groups):
            part = x[i, g * n_per_group:(g + 1) * n_per_group]
            y[i, g * n_per_group:(g + 1) * n_per_group] = (
                (part - part.mean()) / numpy.sqrt(part.var() + eps))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize('shape, groups', [
    ((2, 4, 3, 3), 2), ((2, 6, 4), 3), ((3, 4), 4), ((2, 4, 2, 2), 1),
], ids=['nchw', '3d', 'per_channel', 'one_group'])
def test_group_normalization(shape, groups, rng):
    x = rng.normal(size=shape) * 2 + 1
    gamma = rng.uniform(0.5, 1.5, shape[1])
    beta = rng.normal(size=shape[1])
    check_function(lambda x, g, b: F.group_normalization(x, groups, g, b), (x, gamma, beta),
                   lambda x, g, b: _expected(x, g, b, groups), double_backward=True,
                   backward_tolerance=dict(atol=1e-4, rtol=1e-3))


def test_group_normalization_bad_groups():
    with pytest.raises(ValueError, match='groups'):
        F.group_normalization(numpy.zeros((2, 6, 2)), 4, numpy.ones(6), numpy.zeros(6))
    with pytest.raises(ValueError, match='gamma'):
        F.group_normalization(numpy.zeros((2, 6, 2)), 3, numpy.ones(3), numpy.zeros(3))
