import numpy
import pytest

from cvzoo.transforms import scale


@pytest.mark.parametrize('shape, size, fit_short, expected', [
    ((20, 40), 10, True, (10, 20)), ((40, 20), 10, True, (20, 10)),
    ((20, 40), 10, False, (5, 10)), ((40, 20), 10, False, (10, 5)),
], ids=['wide-short', 'tall-short', 'wide-long', 'tall-long'])
def test_output_size(shape, size, fit_short, expected):
    assert scale(numpy.zeros((3,) + shape, numpy.float32), size, fit_short).shape[1:] == expected


def test_unchanged_when_it_fits():
    img = numpy.zeros((3, 10, 20), numpy.float32)
    assert scale(img, 10) is img
