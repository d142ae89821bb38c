"""The converters of variable-length fields: list_fields, PadImages and
images_and_padded_boxes."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.core.training.convert import PadImages, images_and_padded_boxes, list_fields, pad_boxes


def _batch():
    return [(numpy.zeros((3, 4, 6), numpy.float32), numpy.ones((1, 4), numpy.float32),
             numpy.zeros((1, 4, 6), bool)),
            (numpy.ones((3, 4, 6), numpy.float32), numpy.ones((2, 4), numpy.float32),
             numpy.zeros((2, 4, 6), bool))]


def test_list_fields_stacks_the_images_and_lists_the_rest():
    x, bboxes, masks = list_fields(_batch())
    assert x.shape == (2, 3, 4, 6)
    assert [b.shape for b in bboxes] == [(1, 4), (2, 4)]
    assert [m.shape for m in masks] == [(1, 4, 6), (2, 4, 6)]


def test_host_fields_stay_on_the_host(two_gpus):
    x, bboxes, masks = list_fields(_batch(), 'cuda:1', host_fields=(2,))
    assert backend.get_device_from_array(x) == two_gpus[1]
    assert all(backend.get_device_from_array(b) == two_gpus[1] for b in bboxes)
    assert all(isinstance(m, numpy.ndarray) for m in masks)


def _pad_to_8(imgs):
    out = numpy.zeros((len(imgs), 3, 8, 8), numpy.float32)
    for k, img in enumerate(imgs):
        out[k, :, :img.shape[1], :img.shape[2]] = img
    return out


def test_pad_images_pads_by_the_models_function(two_gpus):
    batch = _batch()
    batch[1] = (numpy.ones((3, 5, 7), numpy.float32),) + batch[1][1:]
    x, _, masks = PadImages(_pad_to_8, host_fields=(2,))(batch, 'cuda:1')
    assert x.shape == (2, 3, 8, 8) and backend.get_device_from_array(x) == two_gpus[1]
    assert float(backend.to_numpy(x)[1, 0, 4, 6]) == 1.0
    assert float(backend.to_numpy(x)[1, 0, 5, 7]) == 0.0
    assert all(isinstance(m, numpy.ndarray) for m in masks)


@pytest.mark.parametrize('convert', [list_fields, PadImages(_pad_to_8)])
def test_an_empty_batch_or_untupled_examples_are_named(convert):
    with pytest.raises(ValueError, match='batch is empty'):
        convert([])
    with pytest.raises(TypeError, match='tuples of fields'):
        convert([numpy.zeros(3)])


def test_padded_boxes_have_fixed_shapes_on_the_device(two_gpus):
    batch = [example[:2] + (numpy.arange(len(example[1]), dtype=numpy.int32),)
             for example in _batch()]
    x, bboxes, labels = images_and_padded_boxes(batch, 'cuda:1', n_box=4)
    assert x.shape == (2, 3, 4, 6) and bboxes.shape == (2, 4, 4) and labels.shape == (2, 4)
    assert bboxes.dtype == numpy.float32 and labels.dtype == numpy.int32
    assert all(backend.get_device_from_array(a) == two_gpus[1] for a in (x, bboxes, labels))
    numpy.testing.assert_array_equal(backend.to_numpy(labels), [[0, -1, -1, -1],
                                                                [0, 1, -1, -1]])
    numpy.testing.assert_array_equal(backend.to_numpy(bboxes)[:, 2:], 0)


def test_an_image_of_more_boxes_pads_the_batch_to_its_count():
    bboxes, labels = pad_boxes([numpy.ones((5, 4)), numpy.ones((1, 4))], [[0] * 5, [1]], 3)
    assert bboxes.shape == (2, 5, 4) and labels.tolist() == [[0] * 5, [1, -1, -1, -1, -1]]
    assert (bboxes[0] == 1).all()  # no box dropped


def test_boxes_and_labels_of_different_counts_are_named():
    with pytest.raises(ValueError, match='image 1 has 2 boxes but 1 labels'):
        pad_boxes([numpy.ones((1, 4)), numpy.ones((2, 4))], [[0], [1]])
