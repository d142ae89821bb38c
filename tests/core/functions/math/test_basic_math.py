import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

BINARY = {
    'add': (F.add, numpy.add),
    'sub': (F.sub, numpy.subtract),
    'mul': (F.mul, numpy.multiply),
    'div': (F.div, numpy.divide),
    'pow': (F.pow, numpy.power),
}
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))]


@pytest.mark.parametrize('name', sorted(BINARY))
@pytest.mark.parametrize('shapes', SHAPES, ids=['same', 'row', 'both', 'scalar'])
def test_binary_with_broadcasting(name, shapes, rng):
    func, expected = BINARY[name]
    a = rng.uniform(0.5, 2.0, shapes[0])
    b = rng.uniform(0.5, 2.0, shapes[1])
    check_function(func, (a, b), expected, double_backward=True)


CONSTANT = {
    'add_right': (lambda x: x + 2.5, lambda x: x + 2.5),
    'add_left': (lambda x: 2.5 + x, lambda x: 2.5 + x),
    'sub_right': (lambda x: x - 2.5, lambda x: x - 2.5),
    'sub_left': (lambda x: 2.5 - x, lambda x: 2.5 - x),
    'mul': (lambda x: 3 * x, lambda x: 3 * x),
    'div_right': (lambda x: x / 4, lambda x: x / 4),
    'div_left': (lambda x: 4 / x, lambda x: 4 / x),
    'pow_right': (lambda x: x ** 3, lambda x: x ** 3),
    'pow_left': (lambda x: 1.7 ** x, lambda x: 1.7 ** x),
    'neg': (lambda x: -x, lambda x: -x),
    'absolute': (abs, numpy.abs),
}


@pytest.mark.parametrize('name', sorted(CONSTANT))
def test_unary_and_constant_ops(name, rng):
    func, expected = CONSTANT[name]
    x = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    if name in ('div_left', 'pow_right', 'pow_left'):
        x = numpy.abs(x)
    check_function(func, (x,), expected, double_backward=True)


