import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def _op(x, flag):
    return numpy.swapaxes(x, -1, -2) if flag and x.ndim >= 2 else x


# (shape of a, shape of b, transa, transb)
CASES = {
    '2d': ((3, 4), (4, 5), False, False),
    'transa': ((4, 3), (4, 5), True, False),
    'transb': ((3, 4), (5, 4), False, True),
    'both': ((4, 3), (5, 4), True, True),
    'batched': ((2, 3, 4), (2, 4, 5), False, False),
    'batched_trans': ((2, 4, 3), (2, 5, 4), True, True),
    'broadcast_b': ((2, 3, 4), (4, 5), False, False),
    'broadcast_both': ((2, 1, 3, 4), (3, 4, 2), False, False),
    'vector_a': ((4,), (2, 4, 5), False, False),
    'vector_b': ((3, 4), (4,), False, False),
    'dot': ((4,), (4,), False, False),
    'empty_batch': ((0, 3, 4), (4, 2), False, False),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_matmul(case, rng):
    shape_a, shape_b, transa, transb = CASES[case]
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    check_function(lambda a, b: F.matmul(a, b, transa, transb), (a, b),
                   lambda a, b: numpy.asarray(numpy.matmul(_op(a, transa), _op(b, transb))),
                   double_backward=True)


def test_matmul_non_contiguous(rng):
    a = rng.standard_normal((5, 4))[::2]
    b = numpy.asfortranarray(rng.standard_normal((4, 2)))
    check_function(F.matmul, (a, b), numpy.matmul, double_backward=True)


def test_matmul_operator(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    check_function(lambda a, b: a @ b, (a, b), numpy.matmul)
    # the closure's host array a meets b on the CPU only (on a GPU that mix is refused)
    check_function(lambda b: a @ b, (b,), lambda b: a @ b, dtypes=(numpy.float64,),
                   devices=['cpu'])


def test_matmul_keeps_float32():
    a = numpy.ones((2, 3), numpy.float32)
    assert F.matmul(a, a, transb=True).dtype == numpy.float32


def test_matmul_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r'inner sizes of a \(2, 3\).*b \(4, 5\).*3 and 4'):
        F.matmul(numpy.zeros((2, 3)), numpy.zeros((4, 5)))
    with pytest.raises(ValueError, match='batch axes'):
        F.matmul(numpy.zeros((2, 2, 3)), numpy.zeros((3, 3, 4)))
    with pytest.raises(TypeError, match='float32 and float64'):
        F.matmul(numpy.zeros((2, 3), numpy.float32), numpy.zeros((3, 4)))
    with pytest.raises(ValueError, match='0-d'):
        F.matmul(numpy.zeros(()), numpy.zeros((3, 4)))
