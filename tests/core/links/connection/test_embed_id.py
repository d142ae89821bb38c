"""EmbedID: shapes, Chainer's default initializer, ignore_label, training its rows."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import backend, initializers
from cvzoo.core import functions as F
from cvzoo.core.links.connection.embed_id import EmbedID


def test_rows_and_shapes(device):
    table = numpy.arange(15, dtype=numpy.float32).reshape(5, 3)
    embed = EmbedID(5, 3, initialW=table).to_device(device)
    x = backend.to_device(numpy.array([[4, 0], [2, 2]], numpy.int32), device)
    y = embed(x)
    assert y.shape == (2, 2, 3) and y.dtype == numpy.float32
    numpy.testing.assert_array_equal(backend.to_numpy(y.array),
                                     table[[[4, 0], [2, 2]]])
    assert [path for path, _ in embed.namedparams()] == ['/W']


def test_default_initializer_is_unit_normal():
    numpy.random.seed(0)
    W = EmbedID(2000, 50).W.array
    assert abs(W.std() - 1.0) < 0.02 and abs(W.mean()) < 0.02


def test_ignore_label_rows_are_zero_and_get_no_gradient(device):
    embed = EmbedID(4, 2, initialW=initializers.Constant(1.0), ignore_label=0)
    embed.to_device(device)
    y = embed(backend.to_device(numpy.array([0, 3, 0, 3]), device))
    numpy.testing.assert_array_equal(backend.to_numpy(y.array), [[0, 0], [1, 1]] * 2)
    F.sum(y).backward()
    numpy.testing.assert_array_equal(backend.to_numpy(embed.W.grad),
                                     [[0, 0], [0, 0], [0, 0], [2, 2]])


@pytest.mark.parametrize('in_size,out_size', [(0, 3), (3, -1), (2.5, 3), (3, None)],
                         ids=['in_size_0', 'out_size_negative', 'in_size_float', 'out_none'])
def test_sizes_are_checked(in_size, out_size):
    with pytest.raises(errors.UsageError, match='size must be a positive int'):
        EmbedID(in_size, out_size)
