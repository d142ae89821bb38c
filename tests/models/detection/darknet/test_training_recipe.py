"""The Darknet recipe's converter: every image's boxes padded to ``max_boxes`` rows, or a
batch to its own most when an image holds more (no box dropped)."""

import numpy

from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector


def _example(n_box, label=1):
    bbox = numpy.tile(numpy.array([[2, 3, 20, 25]], numpy.float32), (n_box, 1))
    return (numpy.zeros((3, 32, 32), numpy.float32), bbox,
            numpy.full(n_box, label, numpy.int32))


def test_batches_pad_to_max_boxes_or_to_their_own_most(tiny_cfg):
    converter = DarknetDetector(tiny_cfg()).training_recipe(max_boxes=3).converter
    x, bboxes, labels = converter([_example(1), _example(2)], 'cpu')
    assert x.shape == (2, 3, 32, 32) and bboxes.shape == (2, 3, 4)
    assert labels.tolist() == [[1, -1, -1], [1, 1, -1]]
    _, bboxes, labels = converter([_example(5, 0), _example(2)], 'cpu')
    assert bboxes.shape == (2, 5, 4) and labels.tolist() == [[0] * 5, [1, 1, -1, -1, -1]]
    numpy.testing.assert_array_equal(bboxes[0], _example(5)[1])


def test_default_is_darknets_yolo_max_of_90(tiny_cfg):
    recipe = DarknetDetector(tiny_cfg()).training_recipe()
    _, bboxes, labels = recipe.converter([_example(1)], 'cpu')
    assert bboxes.shape == (1, 90, 4) and labels.shape == (1, 90)
