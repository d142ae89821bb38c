import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def embed_id_reference(x, W, ignore_label=None):
    y = numpy.zeros(x.shape + (W.shape[1],), W.dtype)
    for index in numpy.ndindex(*x.shape):
        if x[index] != ignore_label:
            y[index] = W[x[index]]
    return y


# id: (x, in_size, out_size, ignore_label)
CASES = {
    'vector': (numpy.array([2, 0, 4, 1]), 5, 3, None),
    'repeated_ids_accumulate': (numpy.array([[1, 1, 3], [1, 0, 1]]), 4, 2, None),
    'ignore_label_outside': (numpy.array([[2, -1], [0, 2]]), 3, 4, -1),
    'ignore_label_is_a_row': (numpy.array([0, 2, 0, 1]), 3, 2, 0),
    'every_id_ignored': (numpy.array([-1, -1]), 3, 2, -1),
    'empty': (numpy.zeros((0, 2), numpy.int32), 3, 2, None),
    'int64_ids_3d': (numpy.array([[[1], [2]], [[2], [2]]], numpy.int64), 3, 2, None),
}


@pytest.mark.parametrize('case', CASES.values(), ids=list(CASES))
def test_embed_id(case, rng):
    x, in_size, out_size, ignore_label = case
    W = rng.normal(size=(in_size, out_size))
    check_function(lambda x, W: F.embed_id(x, W, ignore_label=ignore_label), (x, W),
                   lambda x, W: embed_id_reference(x, W, ignore_label), double_backward=True)


def test_ignored_positions_give_no_gradient_even_when_their_gradient_is_nan(device):
    W = Variable(backend.to_device(numpy.ones((3, 2)), device))
    x = backend.to_device(numpy.array([1, -1]), device)
    y = F.embed_id(x, W, ignore_label=-1)
    y.grad = backend.to_device(numpy.array([[1.0, 2.0], [numpy.nan, numpy.nan]]), device)
    y.backward()
    numpy.testing.assert_array_equal(backend.to_numpy(W.grad), [[0, 0], [1, 2], [0, 0]])


def test_the_gradient_is_one_scatter_add_with_no_loop_over_ids(monkeypatch):
    calls = []
    add_at = backend.add_at
    monkeypatch.setattr(backend, 'add_at', lambda *args: calls.append(1) or add_at(*args))
    W = Variable(numpy.ones((1000, 4), numpy.float32))
    F.sum(F.embed_id(numpy.arange(5000) % 1000, W)).backward()
    assert len(calls) == 1
    numpy.testing.assert_array_equal(W.grad, numpy.full((1000, 4), 5, numpy.float32))


def test_an_id_out_of_range_on_the_host_is_named():
    with pytest.raises(errors.UsageError, match=r'id 3, outside \[0, 3\)'):
        F.embed_id(numpy.array([0, 3]), numpy.zeros((3, 2)))
    with pytest.raises(errors.UsageError, match=r'id -2, outside .* not ignore_label -1'):
        F.embed_id(numpy.array([-1, -2]), numpy.zeros((3, 2)), ignore_label=-1)


def test_an_id_out_of_range_on_a_gpu_gives_nan_rows_not_a_wrapped_row(stand_in):
    W = backend.to_device(numpy.arange(6.0).reshape(3, 2), 'cuda:0')
    y = F.embed_id(backend.to_device(numpy.array([1, 3, -1, -2]), 'cuda:0'), W,
                   ignore_label=-1)
    numpy.testing.assert_array_equal(backend.to_numpy(y.array),
                                     [[2, 3], [numpy.nan] * 2, [0, 0], [numpy.nan] * 2])


@pytest.mark.parametrize('x,W,error,words', [
    (numpy.array([0.0]), numpy.zeros((3, 2)), TypeError, 'x must be an integer array'),
    (numpy.array([0]), numpy.zeros(3), errors.UsageError, 'W must be 2-D'),
], ids=['float_ids', 'W_1d'])
def test_wrong_arguments_are_named(x, W, error, words):
    with pytest.raises(error, match=words):
        F.embed_id(x, W)
