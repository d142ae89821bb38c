import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import Variable
from cvzoo.testing import check_function

MASK = numpy.array([True, False, True, True])
CASES = {
    'int': 1,
    'negative_int': -1,
    'slice': (slice(1, 3), slice(None)),
    'step': (slice(None, None, 2), slice(1, None, 2)),
    'negative_step': (slice(None, None, -1), slice(4, 0, -2)),
    'newaxis': (None, 1, slice(None), None),
    'ellipsis': (Ellipsis, 2),
    'ellipsis_middle': (0, Ellipsis, slice(1, 3)),
    'empty_slice': (slice(2, 2),),
    'int_array': numpy.array([2, 0, 1]),
    'repeated_indexes': (numpy.array([1, 1, 3, 1]), numpy.array([0, 0, 2, 0])),
    'list': ([0, 2, 2],),
    'array_and_slice': (slice(None), Ellipsis, numpy.array([[0, 4], [4, 4]])),
    'bool_mask': MASK,
    'bool_mask_axis1': (slice(None), numpy.array([True, False, False, True, True])),
    'full_bool_mask': numpy.arange(20).reshape(4, 5) % 3 == 0,
    'scalar_result': (2, 3),
    'unique_int_array': (slice(None), numpy.array([4, 0, 2])),
    'negative_duplicate': numpy.array([0, -4, 1]),
    'ellipsis_negative_duplicate': (Ellipsis, numpy.array([[0, -5], [1, 2]])),
    'int_and_duplicate_array': (1, numpy.array([3, -2])),
    'newaxis_then_array': (None, slice(None), numpy.array([1, -4, 1])),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_get_item(case, rng):
    slices = CASES[case]
    x = rng.standard_normal((4, 5))
    check_function(lambda x: F.get_item(x, slices), (x,),
                   lambda x: numpy.asarray(x[slices]), double_backward=True)


def test_get_item_three_axes_and_non_contiguous(rng):
    x = rng.standard_normal((3, 6, 4))[:, ::2]
    slices = (numpy.array([0, 2]), slice(None), numpy.array([3, 3]))
    check_function(lambda x: F.get_item(x, slices), (x,), lambda x: x[slices],
                   double_backward=True)


def test_variable_getitem(rng):
    x = rng.standard_normal((3, 4))
    check_function(lambda x: x[1:, ::-1], (x,), lambda x: x[1:, ::-1], double_backward=True)
    index = Variable(numpy.array([0, 0]), requires_grad=False)
    check_function(lambda x: x[index], (x,), lambda x: x[[0, 0]])


@pytest.mark.parametrize('slices, unique', [
    ((slice(None), numpy.array([2, 0])), True),
    ((numpy.array([1, -2]),), False),
    ((Ellipsis, numpy.array([0, 4])), True),
    ((Ellipsis, numpy.array([0, -5])), False),
    ((None, 0, numpy.array([1, 1])), False),
    ((numpy.array([True, False, True]),), True),
    ((numpy.array([0]), numpy.array([1])), False),
    ((1, slice(None)), True),
], ids=['unique', 'negative_dup', 'ellipsis', 'ellipsis_dup', 'newaxis_dup', 'mask',
        'two_arrays', 'basic'])
def test_selects_each_once(slices, unique):
    from cvzoo.core.functions.array import get_item

    assert get_item.selects_each_once(slices, (3, 5)) is unique


def test_repeated_indexes_accumulate():
    x = Variable(numpy.zeros(3))
    F.sum(x[numpy.array([0, 2, 2, 2])]).backward()
    numpy.testing.assert_array_equal(x.grad, [1.0, 0.0, 3.0])


def test_get_item_errors():
    x = numpy.zeros((2, 3))
    with pytest.raises(TypeError, match='get_item: slices must hold.*float64'):
        F.get_item(x, numpy.array([0.5]))
    with pytest.raises(TypeError, match='got str'):
        F.get_item(x, 'a')
    with pytest.raises(ValueError, match='at most one Ellipsis, got 2'):
        F.get_item(x, (Ellipsis, Ellipsis))
    with pytest.raises(IndexError):
        F.get_item(x, (5,))
