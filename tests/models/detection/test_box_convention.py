"""to_box_convention: continuous training boxes in a model's box convention."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.detection.box_convention import to_box_convention
from cvzoo.models.detection.detector import as_continuous


def test_inclusive_boxes_end_a_pixel_earlier_on_their_own_device(device):
    bbox = numpy.array([[0, 2, 10, 6], [3, 1, 3.5, 9]], numpy.float32)
    got = to_box_convention(backend.to_device(bbox, device), 'inclusive')
    assert backend.get_device_from_array(got) == backend.get_device(device)
    numpy.testing.assert_array_equal(backend.to_numpy(got),
                                     [[0, 2, 9, 5], [3, 1, 3, 8]])


def test_batched_boxes_and_the_round_trip_through_predict():
    bbox = numpy.array([[[1, 2, 10, 6]], [[0, 0, 20, 12]]], numpy.float32)
    inclusive = to_box_convention(bbox, 'inclusive')
    assert inclusive.shape == bbox.shape and inclusive.dtype == numpy.float32
    # what Detector.predict does to an inclusive model's boxes undoes it
    numpy.testing.assert_array_equal(as_continuous(inclusive[1], (12, 20), 'inclusive'),
                                     bbox[1])


def test_unknown_convention_is_refused():
    with pytest.raises(ValueError, match="box_convention: expected one of .* 'pixel'"):
        to_box_convention(numpy.zeros((1, 4), numpy.float32), 'pixel')
