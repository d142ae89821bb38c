import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def _expected(x, t, normalize=True, reduce='mean'):
    s = 1 / (1 + numpy.exp(-x))
    loss = -(t * numpy.log(s) + (1 - t) * numpy.log(1 - s)) * (t != -1)
    loss = loss.astype(x.dtype)
    if reduce == 'no':
        return loss
    count = (t != -1).sum() if normalize else x.shape[0]
    return numpy.asarray(loss.sum() / max(count, 1), dtype=x.dtype)


@pytest.mark.parametrize('kwargs', [{}, dict(normalize=False), dict(reduce='no')],
                         ids=['mean', 'no_normalize', 'reduce_no'])
def test_sigmoid_cross_entropy(kwargs, rng):
    x = rng.normal(size=(4, 3))
    t = rng.integers(-1, 2, (4, 3)).astype(numpy.int32)
    check_function(lambda x, t: F.sigmoid_cross_entropy(x, t, **kwargs), (x, t),
                   lambda x, t: _expected(x, t, **kwargs), double_backward=True)


def test_large_scores_are_finite():
    x = Variable(numpy.array([[1e3, -1e3]], dtype=numpy.float32))
    loss = F.sigmoid_cross_entropy(x, numpy.array([[0, 1]], dtype=numpy.int32))
    loss.backward()
    assert loss.array == pytest.approx(1000.0)
    numpy.testing.assert_allclose(x.grad, [[0.5, -0.5]])


def test_bad_arguments():
    with pytest.raises(ValueError, match='shape'):
        F.sigmoid_cross_entropy(numpy.zeros((2, 3)), numpy.zeros((2,), numpy.int32))
    with pytest.raises(TypeError, match='integer'):
        F.sigmoid_cross_entropy(numpy.zeros(2), numpy.zeros(2))
    with pytest.raises(ValueError, match='reduce'):
        F.sigmoid_cross_entropy(numpy.zeros(2), numpy.zeros(2, numpy.int32), reduce='sum')
