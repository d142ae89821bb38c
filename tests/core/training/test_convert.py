import numpy
import pytest

from cvzoo.core.training.convert import concat_examples


def test_tuples_are_stacked_field_by_field():
    batch = [(numpy.zeros((3, 2), numpy.float32), numpy.int32(1)),
             (numpy.ones((3, 2), numpy.float32), numpy.int32(0))]
    x, t = concat_examples(batch)
    assert x.shape == (2, 3, 2) and x.dtype == numpy.float32
    numpy.testing.assert_array_equal(t, [1, 0])


def test_padding_variable_sized_boxes():
    batch = [(numpy.ones((2, 4), numpy.float32),), (numpy.ones((3, 4), numpy.float32),)]
    bbox, = concat_examples(batch, padding=-1)
    assert bbox.shape == (2, 3, 4)
    assert (bbox[0, 2] == -1).all() and (bbox[1] == 1).all()


def test_unequal_shapes_without_padding_are_explained():
    with pytest.raises(ValueError, match='padding='):
        concat_examples([numpy.zeros(2), numpy.zeros(3)])


def test_dicts():
    out = concat_examples([{'a': numpy.zeros(2)}, {'a': numpy.ones(2)}])
    assert out['a'].shape == (2, 2)
